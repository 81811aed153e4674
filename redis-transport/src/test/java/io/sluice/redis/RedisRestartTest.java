package io.sluice.redis;

import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicPartition;
import io.sluice.testkit.Await;
import io.sluice.testkit.RedisServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redis (AOF on, {@code appendfsync always}) is SIGKILLed while a producer sends without pause, then restarted on
 * the same data: every event whose XADD was acknowledged is in the stream afterwards, and the producer carries on.
 */
@ExtendWith(ServicesExtension.class)
class RedisRestartTest {

    @Test
    void redisKilledAndRestartedWithAofLosesNothingAcknowledged(RedisServer redis) throws Exception {
        RedisStreamsConfig cfg = RedisStreamsRoundTripTest.config(redis).commandTimeoutMillis(2_000).maxBlockMillis(30_000).build();
        assertThat(redis.command("CONFIG", "SET", "appendfsync", "always")).isEqualTo("+OK");
        Set<String> acknowledged = ConcurrentHashMap.newKeySet();
        AtomicLong failed = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        try (RedisStreamsProducer producer = new RedisStreamsProducer(cfg)) {
            Thread sender = new Thread(() -> {
                for (int i = 0; !stop.get(); i++) {
                    String v = "e" + i;
                    producer.send(ProducerRecord.of("ledger", null, v), (p, offset, error) -> {
                        if (error == null) {
                            acknowledged.add(v);
                        } else {
                            failed.incrementAndGet();
                        }
                    });
                }
            }, "restart-test-sender");
            sender.start();
            try {
                Await.until("500 acknowledged before the crash", Duration.ofSeconds(30), () -> acknowledged.size() >= 500);
                redis.kill();
                int beforeRestart = acknowledged.size();
                redis.start();
                Await.until("500 more acknowledged after the restart", Duration.ofSeconds(60), () -> acknowledged.size() >= beforeRestart + 500);
            } finally {
                stop.set(true);
                sender.join(60_000);
            }
            producer.flush();
        }
        Set<String> stored = new HashSet<>();
        try (RedisStreamsConsumer reader = new RedisStreamsConsumer(cfg, ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).maxPollRecords(10_000).build())) {
            reader.assign(Set.of(new TopicPartition("ledger", 0)));
            List<ConsumerRecord> batch;
            while (!(batch = reader.poll(Duration.ofMillis(200))).isEmpty()) {
                batch.forEach(r -> stored.add(r.valueAsString()));
            }
        }
        assertThat(acknowledged).isNotEmpty();
        System.out.printf("[reliability] Redis SIGKILL + restart (AOF, appendfsync always): acknowledged %d, failed %d, present %d%n",
                acknowledged.size(), failed.get(), stored.size());
        Set<String> lost = new HashSet<>(acknowledged);
        lost.removeAll(stored);
        assertThat(lost).as("acknowledged but not in the stream after the restart (%d sends failed)", failed.get()).isEmpty();
    }
}
