package io.sluice.kafka;

import io.sluice.core.GroupAdmin;
import io.sluice.core.GroupStatus;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.testkit.Await;
import io.sluice.testkit.ChildJvm;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka's own {@code KafkaConsumer} (classic group protocol) and {@code Admin} against the Kafka listener: a group
 * whose members join, leave and rebalance consumes every record once committed, resumes from its commits, survives
 * a SIGKILLed member, and is what Kafka's admin API and Sluice's own group views describe.
 */
class KafkaGroupsTest {
    static final Duration DEADLINE = Duration.ofSeconds(90);

    @TempDir
    Path dir;

    @Test
    void aGroupOfThreeWithJoinsALeaveAndRebalancesConsumesEveryRecordAndResumesFromItsCommits() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir)) {
            kafka.broker.createTopic(TopicConfig.of("orders", 6));
            kafka.broker.createTopic(TopicConfig.of("refunds", 2));
            Set<String> consumed = ConcurrentHashMap.newKeySet();
            List<String> produced = new ArrayList<>(produce(kafka, 0, 300));

            Member a = new Member(kafka, "a", consumed);
            Await.until("a owns all 8 partitions", DEADLINE, () -> a.assignment.size() == 8);
            Member b = new Member(kafka, "b", consumed);
            Member c = new Member(kafka, "c", consumed);
            Await.until("three members share the 8 partitions", DEADLINE,
                    () -> a.assignment.size() + b.assignment.size() + c.assignment.size() == 8
                            && !a.assignment.isEmpty() && !b.assignment.isEmpty() && !c.assignment.isEmpty());
            produced.addAll(produce(kafka, 300, 300));

            b.close(); // LeaveGroup: a and c take over b's partitions at once
            Await.until("a and c own all 8 partitions", DEADLINE, () -> a.assignment.size() + c.assignment.size() == 8);
            produced.addAll(produce(kafka, 600, 300));
            Await.until("every record consumed", DEADLINE, () -> consumed.containsAll(produced));
            Await.until("every record committed", DEADLINE, () -> lag(kafka, "workers") == 0);
            a.close();
            c.close();

            List<String> later = produce(kafka, 900, 50);
            Set<String> resumed = ConcurrentHashMap.newKeySet();
            Member d = new Member(kafka, "d", resumed);
            Await.until("the restarted group reads the new records", DEADLINE, () -> resumed.containsAll(later));
            d.close();
            assertThat(resumed).as("resumed from the commits: nothing read twice").containsExactlyInAnyOrderElementsOf(later);
            assertThat(consumed).containsExactlyInAnyOrderElementsOf(produced);
        }
    }

    @Test
    void theOwnerOfAKilledMembersPartitionsChangesAfterItsSessionTimeout() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir)) {
            kafka.broker.createTopic(TopicConfig.of("orders", 4));
            Set<String> consumed = ConcurrentHashMap.newKeySet();
            Member a = new Member(kafka, "a", consumed);
            Await.until("a owns all 4 partitions", DEADLINE, () -> a.assignment.size() == 4);
            try (ChildJvm child = ChildJvm.start(KafkaGroupMember.class, kafka.bootstrap(), "workers", "orders")) {
                assertThat(child.readLine()).startsWith("assigned");
                Await.until("a shares the partitions with the child", DEADLINE, () -> a.assignment.size() == 2);
                child.kill();
                long killedAt = System.nanoTime();
                Await.until("a owns all 4 partitions again", DEADLINE, () -> a.assignment.size() == 4);
                assertThat(Duration.ofNanos(System.nanoTime() - killedAt)).as("not before the child's session expired")
                        .isGreaterThanOrEqualTo(Duration.ofMillis(KafkaGroupMember.SESSION_TIMEOUT_MS - 1_000));
            }
            List<String> produced = produce(kafka, 0, 100);
            Await.until("a reads every partition", DEADLINE, () -> consumed.containsAll(produced));
            a.close();
        }
    }

    @Test
    void aMemberPausedPastItsSessionLosesItsPartitionsAndNoPartitionHasTwoOwnersInAGeneration() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir)) {
            kafka.broker.createTopic(TopicConfig.of("orders", 4));
            Member a = new Member(kafka, "a", ConcurrentHashMap.newKeySet());
            Await.until("a owns all 4 partitions", DEADLINE, () -> a.assignment.size() == 4);
            Process child = new ProcessBuilder(ChildJvm.command("256m", KafkaGroupMember.class, kafka.bootstrap(), "workers", "orders"))
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            Map<Integer, Set<String>> childByGeneration = new ConcurrentHashMap<>();
            Thread reader = new Thread(() -> {
                try (var lines = new java.io.BufferedReader(new java.io.InputStreamReader(child.getInputStream(),
                        java.nio.charset.StandardCharsets.UTF_8))) {
                    for (String line; (line = lines.readLine()) != null; ) {
                        String[] f = line.split(" ", 3);
                        Set<String> owned = new HashSet<>();
                        for (String tp : (f.length > 2 ? f[2] : "").split(",")) {
                            if (!tp.isBlank()) {
                                owned.add(tp);
                            }
                        }
                        childByGeneration.put(Integer.parseInt(f[1]), owned);
                    }
                } catch (java.io.IOException closed) {
                    // the child is gone
                }
            }, "child-member-stdout");
            reader.start();
            try {
                Await.until("a and the child share the partitions", DEADLINE,
                        () -> a.assignment.size() == 2 && childByGeneration.values().stream().anyMatch(s -> s.size() == 2));
                int pausedIn = childByGeneration.keySet().stream().mapToInt(Integer::intValue).max().orElseThrow();

                assertThat(io.sluice.testkit.Signals.send(child.pid(), "STOP")).isTrue();
                Await.until("a owns all 4 partitions once the paused member's session expired", DEADLINE,
                        () -> a.assignment.size() == 4);
                assertThat(io.sluice.testkit.Signals.send(child.pid(), "CONT")).isTrue();
                Await.until("the resumed member rejoins in a later generation", DEADLINE,
                        () -> childByGeneration.keySet().stream().anyMatch(g -> g > pausedIn)
                                && childByGeneration.get(childByGeneration.keySet().stream().max(Integer::compare).orElseThrow()).size() == 2
                                && a.assignment.size() == 2);
            } finally {
                child.destroyForcibly();
                child.waitFor(30, TimeUnit.SECONDS);
                reader.join(10_000);
            }
            a.close();
            for (Map.Entry<Integer, Set<String>> e : childByGeneration.entrySet()) {
                Set<String> parent = a.byGeneration.getOrDefault(e.getKey(), Set.of());
                assertThat(parent).as("generation " + e.getKey() + ": owned by both").doesNotContainAnyElementsOf(e.getValue());
            }
            assertThat(a.byGeneration.keySet()).as("a saw the generations with and without the child").hasSizeGreaterThanOrEqualTo(4);
        }
    }

    @Test
    void kafkasAdminListsAndDescribesTheGroupAndItsOffsetsAndSluiceShowsItsLag() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir)) {
            kafka.broker.createTopic(TopicConfig.of("orders", 2));
            kafka.broker.createTopic(TopicConfig.of("refunds", 1));
            List<String> produced = produce(kafka, 0, 30);
            Set<String> consumed = ConcurrentHashMap.newKeySet();
            Member a = new Member(kafka, "a", consumed);
            Member b = new Member(kafka, "b", consumed);
            Await.until("two members share the 3 partitions", DEADLINE,
                    () -> a.assignment.size() + b.assignment.size() == 3 && !a.assignment.isEmpty() && !b.assignment.isEmpty());
            Await.until("every record consumed and committed", DEADLINE,
                    () -> consumed.containsAll(produced) && lag(kafka, "workers") == 0);

            try (Admin admin = Admin.create(kafka.clientProperties())) {
                Collection<ConsumerGroupListing> listed = admin.listConsumerGroups().all().get(30, TimeUnit.SECONDS);
                assertThat(listed).extracting(ConsumerGroupListing::groupId).containsExactly("workers");
                assertThat(listed.iterator().next().groupState()).hasValue(GroupState.STABLE);

                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of("workers")).all().get(30, TimeUnit.SECONDS).get("workers");
                assertThat(d.groupState()).isEqualTo(GroupState.STABLE);
                assertThat(d.isSimpleConsumerGroup()).isFalse();
                assertThat(d.coordinator().port()).isEqualTo(kafka.listener.port());
                Set<TopicPartition> assigned = new HashSet<>();
                for (MemberDescription m : d.members()) {
                    assigned.addAll(m.assignment().topicPartitions());
                }
                assertThat(d.members()).extracting(MemberDescription::clientId).containsExactlyInAnyOrder("member-a", "member-b");
                assertThat(assigned).containsExactlyInAnyOrder(new TopicPartition("orders", 0),
                        new TopicPartition("orders", 1), new TopicPartition("refunds", 0));

                Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets("workers")
                        .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
                Map<TopicPartition, Long> committed = new HashMap<>();
                offsets.forEach((tp, o) -> committed.put(tp, o.offset()));
                assertThat(committed).isEqualTo(Map.of(new TopicPartition("orders", 0), 10L,
                        new TopicPartition("orders", 1), 10L, new TopicPartition("refunds", 0), 10L));
            }

            GroupStatus s = new GroupAdmin(kafka.broker).describe("workers");
            assertThat(s.state()).isEqualTo("Stable");
            assertThat(s.topic()).as("two topics").isNull();
            assertThat(s.members()).containsOnlyKeys(a.memberId, b.memberId);
            assertThat(s.partitions()).extracting(p -> p.topic() + "/" + p.partition() + "@" + p.committed() + " lag " + p.lag())
                    .containsExactly("orders/0@10 lag 0", "orders/1@10 lag 0", "refunds/0@10 lag 0");
            assertThat(s.partitions()).allSatisfy(p -> assertThat(p.member()).isIn(a.memberId, b.memberId));
            a.close();
            b.close();
        }
    }

    /** {@code count} records, numbered from {@code from}, round-robin over every partition of every topic. */
    static List<String> produce(KafkaListenerFixture kafka, int from, int count) {
        List<io.sluice.core.TopicPartition> partitions = new ArrayList<>();
        for (String topic : kafka.broker.listTopics()) {
            partitions.addAll(new java.util.TreeSet<>(kafka.broker.partitionsOf(topic)));
        }
        List<String> out = new ArrayList<>();
        try (Producer p = kafka.broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = from; i < from + count; i++) {
                io.sluice.core.TopicPartition tp = partitions.get(i % partitions.size());
                String value = tp + "#" + i;
                p.send(ProducerRecord.of(tp.topic(), null, value).withPartition(tp.partition())).join();
                out.add(value);
            }
        }
        return out;
    }

    static long lag(KafkaListenerFixture kafka, String group) {
        try {
            return new GroupAdmin(kafka.broker).describe(group).totalLag();
        } catch (RuntimeException notYet) {
            return -1;
        }
    }

    /** One group member on its own polling thread: reads, commits after every poll, records its assignment. */
    static final class Member implements AutoCloseable {
        final KafkaConsumer<String, String> consumer;
        final Set<TopicPartition> assignment = new CopyOnWriteArraySet<>();
        /** generation → the partitions this member was given in it ("topic-partition") */
        final Map<Integer, Set<String>> byGeneration = new ConcurrentHashMap<>();
        final Thread thread;
        volatile boolean running = true;
        volatile String memberId;

        Member(KafkaListenerFixture kafka, String name, Set<String> consumed) {
            consumer = new KafkaConsumer<>(properties(kafka, name));
            List<String> topics = kafka.broker.listTopics();
            thread = new Thread(() -> {
                consumer.subscribe(topics, new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                        assignment.removeAll(partitions);
                    }

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                        assignment.addAll(partitions);
                        memberId = consumer.groupMetadata().memberId();
                        Set<String> owned = new HashSet<>();
                        partitions.forEach(tp -> owned.add(tp.toString()));
                        byGeneration.put(consumer.groupMetadata().generationId(), owned);
                    }

                    @Override
                    public void onPartitionsLost(Collection<TopicPartition> partitions) {
                        assignment.removeAll(partitions);
                    }
                });
                while (running) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                        consumed.add(r.value());
                    }
                    try {
                        consumer.commitSync();
                    } catch (org.apache.kafka.common.errors.RebalanceInProgressException
                             | org.apache.kafka.clients.consumer.CommitFailedException rebalancing) {
                        // the next poll rejoins; the records are read again by whoever owns them next
                    }
                }
                consumer.close(Duration.ofSeconds(10)); // commits nothing more; sends LeaveGroup
            }, "kafka-member-" + name);
            thread.start();
        }

        static Properties properties(KafkaListenerFixture kafka, String name) {
            Properties p = kafka.clientProperties();
            p.put("group.id", "workers");
            p.put("client.id", "member-" + name);
            p.put("key.deserializer", StringDeserializer.class.getName());
            p.put("value.deserializer", StringDeserializer.class.getName());
            p.put("enable.auto.commit", "false");
            p.put("auto.offset.reset", "earliest");
            p.put("session.timeout.ms", "6000");
            p.put("heartbeat.interval.ms", "500");
            p.put("max.poll.interval.ms", "20000");
            p.put("fetch.max.wait.ms", "100");
            return p;
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            thread.join(30_000);
            assertThat(thread.isAlive()).as(thread.getName() + " stopped").isFalse();
        }
    }
}
