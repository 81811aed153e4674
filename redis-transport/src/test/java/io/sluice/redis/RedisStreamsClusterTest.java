package io.sluice.redis;

import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.ProducerRecord;
import io.sluice.core.RecordMetadata;
import io.sluice.core.TopicPartition;
import io.sluice.testkit.Await;
import io.sluice.testkit.RedisCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link RedisStreamsProducer} and {@link RedisStreamsConsumer} on a Redis Cluster of three masters
 * ({@link RedisCluster}): a topic's partition streams, its groups and its dead-letter stream share the topic's hash
 * tag, so the consumer's one {@code XREADGROUP} over every partition is a single-slot command.
 */
class RedisStreamsClusterTest {
    static RedisCluster cluster;

    @BeforeAll
    static void startCluster() {
        assumeTrue(RedisCluster.isInstalled(), "redis-server and redis-cli are needed");
        cluster = RedisCluster.start(3, 0);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static RedisStreamsConfig.Builder config() {
        return RedisStreamsConfig.builder(cluster.url()).cluster(true).clusterRefreshMillis(1_000)
                .keyPrefix("c" + UUID.randomUUID().toString().substring(0, 8) + ":").partitions(4);
    }

    private static ConsumerConfig group(String name, String client) {
        return ConsumerConfig.builder().groupId(name).clientId(client).offsetReset(OffsetReset.EARLIEST).build();
    }

    private static String value(ConsumerRecord r) {
        return new String(r.value(), StandardCharsets.UTF_8);
    }

    @Test
    void everyRecordSentToFourPartitionsReachesTheGroupOnceAndIsTrimmedOnceAcknowledged() throws Exception {
        // linger and trimming on: on a cluster the producer flushes every send at once, its trimmer runs per key
        RedisStreamsConfig cfg = config().lingerMillis(5).trimMaxLength(100).trimIntervalMillis(50).build();
        int n = 2_000;
        try (RedisStreamsProducer producer = new RedisStreamsProducer(cfg);
             RedisStreamsConsumer consumer = new RedisStreamsConsumer(cfg, group("g", "a"))) {
            consumer.subscribe("orders");
            List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                sent.add(producer.send(ProducerRecord.of("orders", "k" + i, "v" + i)));
            }
            producer.flush();
            Set<Integer> partitions = new HashSet<>();
            for (CompletableFuture<RecordMetadata> f : sent) {
                partitions.add(f.join().partition());
            }
            assertThat(partitions).containsExactlyInAnyOrder(0, 1, 2, 3);
            assertThat(producer.failedSends()).isZero();

            List<String> got = new ArrayList<>();
            Await.until(n + " records", Duration.ofSeconds(30), () -> {
                consumer.poll(Duration.ofMillis(100)).forEach(r -> got.add(value(r)));
                consumer.commitAsync();
                return got.size() >= n;
            });
            consumer.commitSync();
            assertThat(got).hasSize(n).doesNotHaveDuplicates().contains("v0", "v" + (n - 1));

            String key = cfg.streamKey("orders", 0);
            RedisCluster.Node owner = cluster.masterOf(key);
            for (int p = 1; p < 4; p++) {
                assertThat(cluster.masterOf(cfg.streamKey("orders", p))).as("partition " + p + " on the topic's slot").isEqualTo(owner);
            }
            assertThat(owner.command("XPENDING", key, "g").lines().findFirst()).as("entries pending").hasValue("0");
            assertThat(consumer.committed(new TopicPartition("orders", 0))).isPresent();
            // acknowledged by the only group: the trimmer may now cut every stream to about 100 entries
            Await.until("the trimmer cut the acknowledged entries", Duration.ofSeconds(10), () -> producer.trimmedEntries() > 0);
        }
    }

    @Test
    void aDeadMembersEntriesAreClaimedByAnotherOnTheCluster() {
        // a linger without trimming: on a cluster the producer has no timer then, and flushes every send at once
        RedisStreamsConfig cfg = config().lingerMillis(50).claimIdleMillis(300).claimIntervalMillis(50).build();
        try (RedisStreamsProducer producer = new RedisStreamsProducer(cfg)) {
            for (int i = 0; i < 20; i++) {
                producer.send(ProducerRecord.of("jobs", null, "job-" + i));
            }
            producer.flush();
        }
        List<String> taken = new ArrayList<>();
        try (RedisStreamsConsumer dead = new RedisStreamsConsumer(cfg, group("workers", "dead"))) {
            dead.subscribe("jobs");
            Await.until("the doomed member got every job", Duration.ofSeconds(10), () -> {
                dead.poll(Duration.ofMillis(100)).forEach(r -> taken.add(value(r)));
                return taken.size() >= 20;
            });
            // closes without committing: its entries stay pending
        }
        List<String> claimed = new ArrayList<>();
        try (RedisStreamsConsumer survivor = new RedisStreamsConsumer(cfg, group("workers", "survivor"))) {
            survivor.subscribe("jobs");
            Await.until("the survivor claimed every job", Duration.ofSeconds(20), () -> {
                survivor.poll(Duration.ofMillis(100)).forEach(r -> claimed.add(value(r)));
                survivor.commitSync();
                return claimed.size() >= 20;
            });
            assertThat(survivor.claimedEntries()).isEqualTo(20);
        }
        assertThat(claimed).containsExactlyInAnyOrderElementsOf(taken);
    }
}
