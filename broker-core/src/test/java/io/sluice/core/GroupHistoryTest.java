package io.sluice.core;

import io.sluice.testkit.Await;
import io.sluice.testkit.GroupHistory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The group protocol under churn, embedded, checked from a recorded history ({@link GroupHistory}): workers join,
 * read, commit and leave at random while a producer writes; one member crashes (stops polling without leaving) and
 * is expired by the coordinator's timer. The seed is printed so a failing run can be replayed.
 */
class GroupHistoryTest {
    static final int PARTITIONS = 6;
    static final int EVENTS = 3_000;
    /** Bounds the producing while the workers run (about 100 µs apart, so seconds of them at most). */
    static final int MAX_EVENTS = 100_000;

    @TempDir
    Path dir;

    @Test
    void aPartitionIsNeverOwnedByTwoMembersOfOneGeneration() throws Exception {
        long seed = System.nanoTime();
        System.out.println("GroupHistoryTest seed " + seed);
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            broker.createTopic(TopicConfig.of("h", PARTITIONS));
            GroupHistory history = new GroupHistory();
            List<Throwable> failures = new ArrayList<>();

            // The producer keeps producing (at least EVENTS) until every worker is done, so that each generation the
            // workers make has something to read: a fast machine used to send all EVENTS in the first generations,
            // leaving the later ones empty and the check below with too few generations to judge.
            java.util.concurrent.atomic.AtomicBoolean workersDone = new java.util.concurrent.atomic.AtomicBoolean();
            Thread producer = new Thread(() -> {
                try (Producer p = broker.newProducer(ProducerConfig.DEFAULT)) {
                    for (int i = 0; i < EVENTS || (!workersDone.get() && i < MAX_EVENTS); i++) {
                        p.send(ProducerRecord.of("h", null, "e" + i).withPartition(i % PARTITIONS)).get(10, TimeUnit.SECONDS);
                        java.util.concurrent.locks.LockSupport.parkNanos(100_000);
                    }
                } catch (Throwable t) {
                    synchronized (failures) {
                        failures.add(t);
                    }
                }
            }, "history-producer");

            List<Thread> workers = new ArrayList<>();
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
                                    history.pollAndRecord(c, Duration.ofMillis(20));
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
            producer.start();
            for (int i = 0; i < 3; i++) {
                history.pollAndRecord(crashed, Duration.ofMillis(20));
            }
            workers.forEach(Thread::start);
            for (Thread t : workers) {
                t.join(TimeUnit.MINUTES.toMillis(2));
            }
            workersDone.set(true);
            producer.join(TimeUnit.MINUTES.toMillis(1));
            assertThat(failures).as("worker failures").isEmpty();

            // a final member drains from the committed offsets (the crashed one has expired by now)
            Map<TopicPartition, Long> ends = new HashMap<>();
            for (TopicPartition tp : broker.partitionsOf("h")) {
                ends.put(tp, broker.endOffset(tp));
            }
            try (Consumer last = broker.newConsumer(config("last", 2_000))) {
                last.subscribe("h");
                Await.until("the last member owns every partition and read to the end", Duration.ofSeconds(30), () -> {
                    while (history.pollAndRecord(last, Duration.ofMillis(10)) > 0) {
                        // keep reading while there is something
                    }
                    return last.assignment().size() == PARTITIONS
                            && ends.entrySet().stream().allMatch(e -> last.position(e.getKey()) >= e.getValue());
                });
            }
            crashed.close();
            int generations = history.check(ends);
            System.out.println("GroupHistoryTest: " + generations + " generations read something");
            assertThat(generations).as("generations that read something").isGreaterThan(3);
        }
    }

    private static ConsumerConfig config(String client, long sessionMillis) {
        return ConsumerConfig.builder().groupId("g").clientId(client).offsetReset(OffsetReset.EARLIEST)
                .maxPollRecords(50).sessionTimeoutMillis(sessionMillis).build();
    }
}
