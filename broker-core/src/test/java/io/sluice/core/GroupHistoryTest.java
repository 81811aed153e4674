package io.sluice.core;

import io.sluice.core.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A history check of the group protocol under churn (Jepsen-style: record every read, decide from the history).
 * Workers join, read, commit and leave at random; one member crashes (stops polling without leaving) and is expired
 * by the coordinator's timer; a producer keeps writing. Every poll that returned records is recorded as
 * (global order, member, generation, partition, offsets). The checker then demands:
 * <ul>
 *   <li>within one generation, each partition was read by at most one member;</li>
 *   <li>per partition, generations never go back in read order: once a newer generation's owner read it, no older
 *       owner did (the hand-over waits for the old owner to stop);</li>
 *   <li>every produced offset was read at least once (at-least-once), counting a final drain from the committed offsets.</li>
 * </ul>
 * The seed is printed so a failing run can be replayed.
 */
class GroupHistoryTest {
    @TempDir
    Path dir;

    record Read(long order, String member, int generation, TopicPartition partition, long firstOffset, long lastOffset) {
    }

    @Test
    void aPartitionIsNeverOwnedByTwoMembersOfOneGeneration() throws Exception {
        long seed = System.nanoTime();
        System.out.println("GroupHistoryTest seed " + seed);
        int partitions = 6;
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            broker.createTopic(TopicConfig.of("h", partitions));
            ConcurrentLinkedQueue<Read> history = new ConcurrentLinkedQueue<>();
            AtomicLong order = new AtomicLong();
            AtomicBoolean producing = new AtomicBoolean(true);
            AtomicLong produced = new AtomicLong();

            Thread producer = new Thread(() -> {
                try (Producer p = broker.newProducer(ProducerConfig.DEFAULT)) {
                    int i = 0;
                    while (producing.get()) {
                        p.send(ProducerRecord.of("h", null, "e" + i).withPartition(i % partitions)).get(10, TimeUnit.SECONDS);
                        produced.incrementAndGet();
                        i++;
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, "history-producer");
            producer.start();

            List<Thread> workers = new ArrayList<>();
            List<Throwable> failures = new ArrayList<>();
            for (int w = 0; w < 3; w++) {
                Random random = new Random(seed + w);
                String name = "w" + w;
                workers.add(new Thread(() -> {
                    try {
                        for (int round = 0; round < 4; round++) {
                            try (Consumer c = broker.newConsumer(config(name, 2_000))) {
                                c.subscribe("h");
                                int polls = 5 + random.nextInt(25);
                                for (int i = 0; i < polls; i++) {
                                    pollAndRecord(c, history, order);
                                }
                            }
                        }
                    } catch (Throwable t) {
                        synchronized (failures) {
                            failures.add(t);
                        }
                    }
                }, "history-" + name));
            }
            // one member that crashes: reads a little, then never polls again (its session expires on the timer)
            Consumer crashed = broker.newConsumer(config("crashed", 500));
            crashed.subscribe("h");
            for (int i = 0; i < 3; i++) {
                pollAndRecord(crashed, history, order);
            }
            workers.forEach(Thread::start);
            for (Thread t : workers) {
                t.join(TimeUnit.MINUTES.toMillis(2));
            }
            producing.set(false);
            producer.join(TimeUnit.SECONDS.toMillis(30));
            assertThat(failures).as("worker failures").isEmpty();

            // a final member drains from the committed offsets (the crashed one has expired by now)
            try (Consumer last = broker.newConsumer(config("last", 2_000))) {
                last.subscribe("h");
                Await.until("the last member owns every partition", Duration.ofSeconds(20), () -> {
                    pollAndRecord(last, history, order);
                    return last.assignment().size() == partitions;
                });
                Await.until("the last member read to the end", Duration.ofSeconds(30), () -> {
                    pollAndRecord(last, history, order);
                    for (TopicPartition tp : last.assignment()) {
                        if (last.position(tp) < broker.endOffset(tp)) {
                            return false;
                        }
                    }
                    return true;
                });
            }
            crashed.close();

            check(new ArrayList<>(history), broker, partitions);
            assertThat(produced.get()).isPositive();
        }
    }

    private static ConsumerConfig config(String client, long sessionMillis) {
        return ConsumerConfig.builder().groupId("g").clientId(client).offsetReset(OffsetReset.EARLIEST)
                .maxPollRecords(50).sessionTimeoutMillis(sessionMillis).build();
    }

    private static void pollAndRecord(Consumer c, ConcurrentLinkedQueue<Read> history, AtomicLong order) {
        List<ConsumerRecord> records = c.poll(Duration.ofMillis(20));
        if (records.isEmpty()) {
            return;
        }
        // no heartbeat runs between the reads of a poll and its return: this is the generation they were read in
        ConsumerGroups.Membership m = c.groupMembership().orElseThrow();
        Map<TopicPartition, long[]> ranges = new TreeMap<>();
        for (ConsumerRecord r : records) {
            ranges.merge(r.topicPartition(), new long[] {r.offset(), r.offset()},
                    (a, b) -> new long[] {Math.min(a[0], b[0]), Math.max(a[1], b[1])});
        }
        long at = order.incrementAndGet();
        ranges.forEach((tp, range) -> history.add(new Read(at, m.memberId(), m.generation(), tp, range[0], range[1])));
        try {
            c.commitSync();
        } catch (SluiceException.GroupException refused) {
            // a newer generation owns the partitions: their next owner reads them again
        }
    }

    private static void check(List<Read> history, Broker broker, int partitions) {
        history.sort((a, b) -> Long.compare(a.order(), b.order()));
        Map<Integer, Map<TopicPartition, Set<String>>> owners = new HashMap<>();
        Map<TopicPartition, Integer> lastGeneration = new HashMap<>();
        Map<TopicPartition, Set<Long>> readOffsets = new HashMap<>();
        for (Read r : history) {
            owners.computeIfAbsent(r.generation(), g -> new HashMap<>())
                    .computeIfAbsent(r.partition(), p -> new HashSet<>()).add(r.member());
            int before = lastGeneration.getOrDefault(r.partition(), Integer.MIN_VALUE);
            assertThat(r.generation()).as("generation of %s read at %d (after generation %d read it)", r, r.order(), before)
                    .isGreaterThanOrEqualTo(before);
            lastGeneration.put(r.partition(), r.generation());
            Set<Long> seen = readOffsets.computeIfAbsent(r.partition(), p -> new HashSet<>());
            for (long o = r.firstOffset(); o <= r.lastOffset(); o++) {
                seen.add(o);
            }
        }
        owners.forEach((generation, byPartition) -> byPartition.forEach((tp, members) ->
                assertThat(members).as("owners of %s in generation %d", tp, generation).hasSize(1)));
        assertThat(owners.size()).as("generations seen").isGreaterThan(3);
        for (int p = 0; p < partitions; p++) {
            TopicPartition tp = new TopicPartition("h", p);
            long end = broker.endOffset(tp);
            Set<Long> seen = readOffsets.getOrDefault(tp, Set.of());
            for (long o = 0; o < end; o++) {
                assertThat(seen).as("offset %d of %s was read", o, tp).contains(o);
            }
        }
    }
}
