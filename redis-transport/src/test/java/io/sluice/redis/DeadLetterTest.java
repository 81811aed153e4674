package io.sluice.redis;

import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.codec.StringCodec;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.ProducerRecord;
import io.sluice.testkit.Await;
import io.sluice.testkit.RedisServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** An entry whose processing keeps failing (never acknowledged) reaches the dead-letter stream after maxDeliveries. */
@ExtendWith(ServicesExtension.class)
class DeadLetterTest {

    @Test
    void aPoisonEntryReachesTheDeadLetterStreamAfterMaxDeliveries(RedisServer redis) {
        RedisStreamsConfig cfg = RedisStreamsRoundTripTest.config(redis).claimIdleMillis(100).claimIntervalMillis(20).maxDeliveries(3).build();
        String poisonId;
        try (RedisStreamsProducer producer = new RedisStreamsProducer(cfg)) {
            producer.send(ProducerRecord.of("payments", null, "ok-1"));
            poisonId = producer.send(ProducerRecord.of("payments", "bad", "poison")).join().offset() + "";
            producer.send(ProducerRecord.of("payments", null, "ok-2"));
            producer.flush();
        }
        AtomicInteger poisonDeliveries = new AtomicInteger();
        List<String> processed = new ArrayList<>();
        String dlq = cfg.deadLetterKey("payments");
        try (RedisStreamsConsumer consumer = new RedisStreamsConsumer(cfg, RedisStreamsRoundTripTest.group("billing"))) {
            consumer.subscribe("payments");
            Await.until("the poison entry in " + dlq, Duration.ofSeconds(60), () -> {
                List<ConsumerRecord> good = new ArrayList<>();
                for (ConsumerRecord r : consumer.poll(Duration.ofMillis(50))) {
                    if (r.valueAsString().equals("poison")) {
                        poisonDeliveries.incrementAndGet(); // processing fails: not acknowledged
                    } else {
                        processed.add(r.valueAsString());
                        good.add(r);
                    }
                }
                consumer.commitSync(good);
                return xlen(redis, dlq) == 1;
            });
            assertThat(consumer.deadLetteredEntries()).isEqualTo(1);
        }
        assertThat(poisonDeliveries.get()).isEqualTo(3);
        assertThat(processed).containsExactly("ok-1", "ok-2");
        assertThat(RedisStreamsRoundTripTest.pendingCount(redis, cfg.streamKey("payments", 0), "billing")).isZero();
        io.lettuce.core.RedisClient c = io.lettuce.core.RedisClient.create(redis.url());
        try (var conn = c.connect(StringCodec.UTF8)) {
            List<StreamMessage<String, String>> dead = conn.sync().xrange(dlq, Range.create("-", "+"));
            assertThat(dead).hasSize(1);
            // DeadLetterStream's format, the one of every dead letter (ingest's too): the value, where, who gave up
            // after how many deliveries, and the event's other fields (its key) as they were
            assertThat(dead.get(0).getBody())
                    .containsEntry("payload", "poison")
                    .containsEntry("k", "bad")
                    .containsEntry("source", cfg.streamKey("payments", 0) + "/"
                            + io.sluice.redis.internal.EntryIds.toId(Long.parseLong(poisonId)))
                    .containsEntry("group", "billing")
                    .containsEntry("deliveries", "3");
            assertThat(dead.get(0).getBody().get("error")).contains("delivered 3 times");
        } finally {
            c.shutdown();
        }
    }

    static long xlen(RedisServer redis, String key) {
        return redis.commandLong("XLEN", key);
    }
}
