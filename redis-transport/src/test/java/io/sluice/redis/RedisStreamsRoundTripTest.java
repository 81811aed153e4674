package io.sluice.redis;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.Header;
import io.sluice.core.OffsetReset;
import io.sluice.core.Producer;
import io.sluice.core.ProducerRecord;
import io.sluice.core.RecordMetadata;
import io.sluice.core.TopicPartition;
import io.sluice.testkit.Await;
import io.sluice.testkit.RedisServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(ServicesExtension.class)
class RedisStreamsRoundTripTest {

    static RedisStreamsConfig.Builder config(RedisServer redis) {
        return RedisStreamsConfig.builder(redis.url()).keyPrefix("t" + UUID.randomUUID().toString().substring(0, 8) + ":");
    }

    static ConsumerConfig group(String name) {
        return ConsumerConfig.builder().groupId(name).clientId("c").offsetReset(OffsetReset.EARLIEST).build();
    }

    @Test
    void eventsSentThroughTheProducerInterfaceReachAGroupMemberWithKeyHeadersTimestampAndEntryId(RedisServer redis) throws Exception {
        RedisStreamsConfig cfg = config(redis).partitions(2).build();
        List<RecordMetadata> acks = new ArrayList<>();
        try (Producer producer = new RedisStreamsProducer(cfg);
             Consumer consumer = new RedisStreamsConsumer(cfg, group("g"))) {
            consumer.subscribe("orders");
            List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                sent.add(producer.send(new ProducerRecord("orders", null, ("k" + i).getBytes(StandardCharsets.UTF_8),
                        ("v" + i).getBytes(StandardCharsets.UTF_8), List.of(Header.of("trace", "t" + i)), 1_000_000L + i)));
            }
            for (CompletableFuture<RecordMetadata> f : sent) {
                acks.add(f.get());
            }
            List<ConsumerRecord> got = new ArrayList<>();
            Await.until("100 records", Duration.ofSeconds(30), () -> {
                got.addAll(consumer.poll(Duration.ofMillis(100)));
                return got.size() >= 100;
            });
            consumer.commitSync();
            assertThat(got).hasSize(100);
            Set<String> values = new HashSet<>();
            for (ConsumerRecord r : got) {
                int i = Integer.parseInt(r.valueAsString().substring(1));
                values.add(r.valueAsString());
                assertThat(r.keyAsString()).isEqualTo("k" + i);
                assertThat(r.headers()).containsExactly(Header.of("trace", "t" + i));
                assertThat(r.timestamp()).isEqualTo(1_000_000L + i);
                assertThat(RedisStreamsConsumer.entryId(r)).matches("\\d+-\\d+");
                assertThat(io.sluice.redis.internal.EntryIds.toId(r.offset())).isEqualTo(RedisStreamsConsumer.entryId(r));
                RecordMetadata ack = acks.get(i);
                assertThat(ack.partition()).isEqualTo(r.partition());
                assertThat(ack.offset()).isEqualTo(r.offset());
                assertThat(r.partition()).isEqualTo(io.sluice.core.KeyPartitioner.partition(r.key(), 2));
            }
            assertThat(values).hasSize(100);
            for (int p = 0; p < 2; p++) {
                assertThat(redis.command("XPENDING", cfg.streamKey("orders", p), "g")).isEqualTo("*4");
                assertThat(pendingCount(redis, cfg.streamKey("orders", p), "g")).isZero();
            }
        }
    }

    @Test
    void committedIsTheGroupsOldestUnacknowledgedEntry(RedisServer redis) {
        RedisStreamsConfig cfg = config(redis).build();
        try (RedisStreamsProducer producer = new RedisStreamsProducer(cfg);
             RedisStreamsConsumer consumer = new RedisStreamsConsumer(cfg, group("g"))) {
            consumer.subscribe("t");
            for (int i = 0; i < 10; i++) {
                producer.send(ProducerRecord.of("t", null, "v" + i));
            }
            producer.flush();
            List<ConsumerRecord> got = new ArrayList<>();
            Await.until("10 records", Duration.ofSeconds(30), () -> {
                got.addAll(consumer.poll(Duration.ofMillis(100)));
                return got.size() >= 10;
            });
            TopicPartition tp = new TopicPartition("t", 0);
            consumer.commitSync(Map.of(tp, got.get(4).offset()));
            assertThat(consumer.committed(tp)).hasValue(got.get(4).offset());
            assertThat(pendingCount(redis, cfg.streamKey("t", 0), "g")).isEqualTo(6);
            consumer.commitSync();
            assertThat(consumer.committed(tp)).hasValue(got.get(9).offset() + 1);
            assertThat(consumer.position(tp)).isEqualTo(got.get(9).offset() + 1);
        }
    }

    @Test
    void anAssignedConsumerReadsWithoutAGroupFromItsOwnPosition(RedisServer redis) {
        RedisStreamsConfig cfg = config(redis).build();
        try (RedisStreamsProducer producer = new RedisStreamsProducer(cfg);
             RedisStreamsConsumer consumer = new RedisStreamsConsumer(cfg, ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).build())) {
            List<RecordMetadata> acks = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                acks.add(producer.send(ProducerRecord.of("a", null, "v" + i)).join());
            }
            TopicPartition tp = new TopicPartition("a", 0);
            consumer.assign(Set.of(tp));
            consumer.seek(tp, acks.get(2).offset());
            List<ConsumerRecord> got = new ArrayList<>();
            Await.until("3 records", Duration.ofSeconds(30), () -> {
                got.addAll(consumer.poll(Duration.ofMillis(100)));
                return got.size() >= 3;
            });
            assertThat(got).extracting(ConsumerRecord::valueAsString).containsExactly("v2", "v3", "v4");
            assertThat(consumer.position(tp)).isEqualTo(acks.get(4).offset() + 1);
        }
    }

    @Test
    void commitAsyncAcknowledgementsGoOutWithALaterReadOrOnClose(RedisServer redis) {
        RedisStreamsConfig cfg = config(redis).asyncCommitLingerMillis(50).build();
        String key = cfg.streamKey("async", 0);
        try (RedisStreamsProducer producer = new RedisStreamsProducer(cfg)) {
            for (int i = 0; i < 20; i++) {
                producer.send(ProducerRecord.of("async", null, "v" + i));
            }
            producer.flush();
            try (RedisStreamsConsumer consumer = new RedisStreamsConsumer(cfg, ConsumerConfig.builder().groupId("g")
                    .offsetReset(OffsetReset.EARLIEST).maxPollRecords(10).build())) {
                consumer.subscribe("async");
                List<ConsumerRecord> first = new ArrayList<>();
                Await.until("a first batch", Duration.ofSeconds(30), () -> first.addAll(consumer.poll(Duration.ofMillis(100))));
                consumer.commitAsync();
                Await.until("the first batch acknowledged by a later read", Duration.ofSeconds(30), () -> {
                    consumer.poll(Duration.ofMillis(20));
                    return countPendingOf(redis, key, first) == 0;
                });
                consumer.commitAsync();
            }
            assertThat(pendingCount(redis, key, "g")).isZero();
        }
    }

    /** How many of these records are still pending in group g. */
    private static long countPendingOf(RedisServer redis, String key, List<ConsumerRecord> records) {
        io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(redis.url());
        try (var c = client.connect(io.lettuce.core.codec.StringCodec.UTF8)) {
            return c.sync().xpending(key, "g", io.lettuce.core.Range.create("-", "+"), io.lettuce.core.Limit.from(1000)).stream()
                    .filter(p -> records.stream().anyMatch(r -> RedisStreamsConsumer.entryId(r).equals(p.getId()))).count();
        } finally {
            client.shutdown();
        }
    }

    static long pendingCount(RedisServer redis, String key, String group) {
        // XPENDING summary's first element is the count; read it through a consumer-free path
        io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(redis.url());
        try (var c = client.connect(io.lettuce.core.codec.StringCodec.UTF8)) {
            return c.sync().xpending(key, group).getCount();
        } finally {
            client.shutdown();
        }
    }
}
