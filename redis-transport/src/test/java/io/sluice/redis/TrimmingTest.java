package io.sluice.redis;

import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.ProducerRecord;
import io.sluice.testkit.Await;
import io.sluice.testkit.RedisServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Trimming never removes an entry a consumer group has not acknowledged, unless the user opted in. */
@ExtendWith(ServicesExtension.class)
class TrimmingTest {
    private static final int EVENTS = 1_000;

    @Test
    void aSlowGroupIsNeverTrimmedPast(RedisServer redis) {
        RedisStreamsConfig cfg = RedisStreamsRoundTripTest.config(redis).trimMaxLength(100).trimIntervalMillis(5).build();
        String key = cfg.streamKey("clicks", 0);
        Set<String> received = new HashSet<>();
        try (RedisStreamsProducer producer = new RedisStreamsProducer(cfg);
             RedisStreamsConsumer slow = new RedisStreamsConsumer(cfg, ConsumerConfig.builder().groupId("slow").clientId("slow")
                     .offsetReset(OffsetReset.EARLIEST).maxPollRecords(10).build())) {
            slow.subscribe("clicks");
            producer.send(ProducerRecord.of("clicks", null, "e0")).join();
            slow.poll(Duration.ofSeconds(5)).forEach(r -> received.add(r.valueAsString()));
            for (int i = 1; i < EVENTS; i++) {
                producer.send(ProducerRecord.of("clicks", null, "e" + i));
            }
            producer.flush();
            long runs = producer.trimRuns();
            Await.until("three trim passes after the last append", Duration.ofSeconds(30), () -> producer.trimRuns() >= runs + 3);
            assertThat(producer.trimsHeldByGroups()).isPositive();
            assertThat(redis.commandLong("XLEN", key)).isEqualTo(EVENTS);

            Await.until("the slow group read everything", Duration.ofSeconds(60), () -> {
                for (ConsumerRecord r : slow.poll(Duration.ofMillis(100))) {
                    received.add(r.valueAsString());
                }
                slow.commitSync();
                return received.size() == EVENTS;
            });
            Await.until("trimmed once the group acknowledged", Duration.ofSeconds(30), () -> redis.commandLong("XLEN", key) <= 300);
            assertThat(producer.trimmedEntries()).isGreaterThanOrEqualTo(EVENTS - 300);
        }
    }

    @Test
    void optingInTrimsEntriesTheGroupHasNotRead(RedisServer redis) {
        RedisStreamsConfig cfg = RedisStreamsRoundTripTest.config(redis).trimMaxLength(100).trimUnacknowledged(true).build();
        String key = cfg.streamKey("clicks", 0);
        try (RedisStreamsProducer producer = new RedisStreamsProducer(cfg);
             RedisStreamsConsumer late = new RedisStreamsConsumer(cfg, RedisStreamsRoundTripTest.group("late"))) {
            late.subscribe("clicks");
            for (int i = 0; i < EVENTS; i++) {
                producer.send(ProducerRecord.of("clicks", null, "e" + i));
            }
            producer.flush();
            assertThat(redis.commandLong("XLEN", key)).isLessThan(EVENTS).isLessThanOrEqualTo(300);
            Set<String> received = new HashSet<>();
            List<ConsumerRecord> batch;
            while (!(batch = late.poll(Duration.ofMillis(100))).isEmpty()) {
                batch.forEach(r -> received.add(r.valueAsString()));
            }
            assertThat(received).hasSizeLessThan(EVENTS).doesNotContain("e0");
        }
    }
}
