package io.sluice.redis;

import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.ProducerRecord;
import io.sluice.testkit.Await;
import io.sluice.testkit.ChildJvm;
import io.sluice.testkit.RedisServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** A member killed (SIGKILL) with a polled, uncommitted batch: another member claims and processes those entries. */
@ExtendWith(ServicesExtension.class)
class ConsumerTakeoverTest {

    @Test
    void aConsumerKilledMidBatchHasItsPendingEntriesClaimedByAnotherMember(RedisServer redis) throws Exception {
        RedisStreamsConfig cfg = RedisStreamsRoundTripTest.config(redis).claimIdleMillis(300).claimIntervalMillis(50).build();
        int total = 200;
        try (RedisStreamsProducer producer = new RedisStreamsProducer(cfg)) {
            for (int i = 0; i < total; i++) {
                producer.send(ProducerRecord.of("jobs", null, "job-" + i));
            }
            producer.flush();
        }
        try (ChildJvm doomed = ChildJvm.start(TakeoverChild.class, redis.url(), cfg.keyPrefix(), "jobs", "workers", "50")) {
            String line = doomed.readLine();
            assertThat(line).isEqualTo("POLLED 50");
            doomed.kill();
        }
        assertThat(RedisStreamsRoundTripTest.pendingCount(redis, cfg.streamKey("jobs", 0), "workers")).isEqualTo(50);

        Map<String, Integer> seen = new HashMap<>();
        try (RedisStreamsConsumer survivor = new RedisStreamsConsumer(cfg, ConsumerConfig.builder().groupId("workers")
                .clientId("survivor").offsetReset(OffsetReset.EARLIEST).build())) {
            survivor.subscribe("jobs");
            Await.until("all " + total + " jobs processed by the survivor", Duration.ofSeconds(60), () -> {
                for (ConsumerRecord r : survivor.poll(Duration.ofMillis(100))) {
                    seen.merge(r.valueAsString(), 1, Integer::sum);
                }
                survivor.commitSync();
                return seen.size() == total;
            });
            assertThat(survivor.claimedEntries()).isEqualTo(50);
        }
        System.out.printf("[reliability] consumer SIGKILL mid-batch: sent %d, processed %d, duplicated %d%n", total, seen.size(),
                seen.values().stream().mapToInt(n -> n - 1).sum());
        assertThat(seen.values()).allMatch(n -> n == 1);
        assertThat(RedisStreamsRoundTripTest.pendingCount(redis, cfg.streamKey("jobs", 0), "workers")).isZero();
    }
}
