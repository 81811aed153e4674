package io.sluice.core;

import io.sluice.testkit.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 12, "threads for few cores": the journal writers and live subscribers of every partition share
 * {@code journal.threads} and {@code subscriber.threads} threads (Agrona agents), instead of two threads per
 * partition, and sharing changes nothing a producer or subscriber can see: each partition keeps its order and dense
 * offsets, a failing or closing subscriber leaves the others on its thread running.
 */
class SharedStageThreadsTest {
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void sixteenPartitionsShareTheConfiguredThreadsAndEachKeepsItsOrder() throws Exception {
        int partitions = 16;
        int perPartition = 3_000;
        BrokerConfig config = BrokerConfig.builder(dir).ringSize(1024).journalThreads(2).subscriberThreads(1).build();
        try (Broker broker = Broker.open(config)) {
            broker.createTopic(TopicConfig.of("shared", partitions));
            List<List<Long>> seen = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                seen.add(new CopyOnWriteArrayList<>());
            }
            Set<String> subscriberThreads = ConcurrentHashMap.newKeySet();
            Set<String> journalThreads = ConcurrentHashMap.newKeySet();
            try (Subscription ignored = broker.subscribe("shared", "order", (event, endOfBatch) -> {
                subscriberThreads.add(Thread.currentThread().getName());
                seen.get(event.partition()).add(event.offset());
            })) {
                // four application threads, each sending to every partition
                List<Thread> senders = new ArrayList<>();
                for (int s = 0; s < 4; s++) {
                    int sender = s;
                    senders.add(new Thread(() -> {
                        try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                            for (int i = sender; i < perPartition * partitions; i += 4) {
                                producer.send(ProducerRecord.of("shared", null, "e" + i).withPartition(i % partitions),
                                        (partition, offset, error) -> journalThreads.add(Thread.currentThread().getName()));
                            }
                            producer.flush();
                        }
                    }, "sender-" + s));
                }
                senders.forEach(Thread::start);
                for (Thread t : senders) {
                    t.join();
                }
                Await.until("every event delivered", DEADLINE,
                        () -> seen.stream().mapToInt(List::size).sum() == partitions * perPartition);
            }
            for (int p = 0; p < partitions; p++) {
                List<Long> expected = new ArrayList<>();
                for (long o = 0; o < perPartition; o++) {
                    expected.add(o);
                }
                assertThat(seen.get(p)).as("partition %d, delivered in offset order, each once", p).isEqualTo(expected);
                assertThat(broker.endOffset(new TopicPartition("shared", p))).isEqualTo(perPartition);
            }
            // acknowledged by the journal writers: two threads for sixteen partitions; delivered by one thread
            assertThat(journalThreads).containsExactlyInAnyOrder("sluice-journal-0", "sluice-journal-1");
            assertThat(subscriberThreads).containsExactly("sluice-subscriber-0");
        }
    }

    @Test
    void aSubscriberThatThrowsOrClosesItselfLeavesTheOthersOnItsThreadRunning() throws Exception {
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).ringSize(1024).subscriberThreads(1).build())) {
            broker.createTopic(TopicConfig.of("t", 2));
            AtomicInteger thrown = new AtomicInteger();
            List<Long> steady = new CopyOnWriteArrayList<>();
            AtomicReference<Subscription> quitter = new AtomicReference<>();
            AtomicInteger quitterSaw = new AtomicInteger();
            try (Subscription failing = broker.subscribe("t", "failing", (event, endOfBatch) -> {
                     thrown.incrementAndGet();
                     throw new IllegalStateException("a subscriber bug");
                 });
                 Subscription ok = broker.subscribe("t", "steady", (event, endOfBatch) -> steady.add(event.offset()));
                 Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                // a subscriber that closes its own subscription from its callback, on the shared thread
                quitter.set(broker.subscribe("t", "quitter", (event, endOfBatch) -> {
                    if (quitterSaw.incrementAndGet() == 1) {
                        quitter.get().close();
                    }
                }));
                for (int i = 0; i < 100; i++) {
                    producer.send(ProducerRecord.of("t", null, "e" + i).withPartition(0)).get();
                }
                Await.until("the steady subscriber got every event", DEADLINE, () -> steady.size() == 100);
                Await.until("the failing subscriber was called for every event", DEADLINE, () -> thrown.get() == 100);
                Await.until("the quitter got its first event", DEADLINE, () -> quitterSaw.get() >= 1);
                assertThat(quitterSaw.get()).as("events the quitter got: none after it closed itself").isEqualTo(1);

                // and the partitions keep going after it left
                for (int i = 0; i < 100; i++) {
                    producer.send(ProducerRecord.of("t", null, "f" + i).withPartition(1)).get();
                }
                Await.until("the steady subscriber got the events after the quitter left", DEADLINE, () -> steady.size() == 200);
                Await.until("the failing subscriber too", DEADLINE, () -> thrown.get() == 200);
                assertThat(quitterSaw.get()).isEqualTo(1);
            }
        }
    }

    /**
     * {@code subscriber.threads = 0}: no subscriber threads start; a journaled partition's subscribers run on its journal
     * writer's thread, each event delivered after it was journaled (the subscriber sees it below the end offset, and
     * on the thread that acknowledged it), and a memory-only partition's subscribers on a journal thread. Order, one
     * delivery per event, and a subscriber closing itself from its callback work as on subscriber threads.
     */
    @Test
    void withNoSubscriberThreadsSubscribersRunOnTheJournalThreadsAfterTheirPartitionsJournalWriter() throws Exception {
        int partitions = 4;
        int perPartition = 2_000;
        BrokerConfig config = BrokerConfig.builder(dir).ringSize(1024).journalThreads(2).subscriberThreads(0).build();
        try (Broker broker = Broker.open(config)) {
            broker.createTopic(TopicConfig.of("journaled", partitions));
            broker.createTopic(TopicConfig.builder("memory").partitions(2).journaled(false).build());
            broker.createTopic(TopicConfig.of("solo", 1));
            List<List<Long>> seen = new ArrayList<>();
            List<Set<String>> deliveredOn = new ArrayList<>();
            List<Set<String>> acknowledgedOn = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                seen.add(new CopyOnWriteArrayList<>());
                deliveredOn.add(ConcurrentHashMap.newKeySet());
                acknowledgedOn.add(ConcurrentHashMap.newKeySet());
            }
            AtomicInteger notYetJournaled = new AtomicInteger();
            AtomicInteger memoryEvents = new AtomicInteger();
            Set<String> memoryThreads = ConcurrentHashMap.newKeySet();
            AtomicReference<Subscription> quitter = new AtomicReference<>();
            AtomicInteger quitterSaw = new AtomicInteger();
            try (Subscription journaled = broker.subscribe("journaled", "order", (event, endOfBatch) -> {
                     if (broker.endOffset(new TopicPartition("journaled", event.partition())) <= event.offset()) {
                         notYetJournaled.incrementAndGet();
                     }
                     deliveredOn.get(event.partition()).add(Thread.currentThread().getName());
                     seen.get(event.partition()).add(event.offset());
                 });
                 Subscription memory = broker.subscribe("memory", "count", (event, endOfBatch) -> {
                     memoryThreads.add(Thread.currentThread().getName());
                     memoryEvents.incrementAndGet();
                 });
                 Producer memoryProducer = broker.newProducer(ProducerConfig.builder().acks(Acks.MEMORY).build())) {
                quitter.set(broker.subscribe("solo", "quitter", (event, endOfBatch) -> {
                    if (quitterSaw.incrementAndGet() == 1) {
                        quitter.get().close(); // on the journal thread, from its own callback
                    }
                }));
                List<Thread> senders = new ArrayList<>();
                for (int s = 0; s < 2; s++) {
                    int sender = s;
                    senders.add(new Thread(() -> {
                        try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                            for (int i = sender; i < perPartition * partitions; i += 2) {
                                int partition = i % partitions;
                                producer.send(ProducerRecord.of("journaled", null, "e" + i).withPartition(partition),
                                        (p, offset, error) -> acknowledgedOn.get(p).add(Thread.currentThread().getName()));
                            }
                            producer.flush();
                        }
                    }, "sender-" + s));
                }
                senders.forEach(Thread::start);
                for (int i = 0; i < 1_000; i++) {
                    memoryProducer.send(ProducerRecord.of("memory", null, "m" + i));
                }
                for (Thread t : senders) {
                    t.join();
                }
                try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                    for (int i = 0; i < 100; i++) {
                        producer.send(ProducerRecord.of("solo", null, "s" + i)).get();
                    }
                }
                Await.until("every journaled event delivered", DEADLINE,
                        () -> seen.stream().mapToInt(List::size).sum() == partitions * perPartition);
                Await.until("every memory-only event delivered", DEADLINE, () -> memoryEvents.get() == 1_000);
            }
            assertThat(notYetJournaled.get()).as("events delivered before their journal append").isZero();
            assertThat(quitterSaw.get()).as("events the quitter got: none after it closed itself").isEqualTo(1);
            for (int p = 0; p < partitions; p++) {
                List<Long> expected = new ArrayList<>();
                for (long o = 0; o < perPartition; o++) {
                    expected.add(o);
                }
                assertThat(seen.get(p)).as("partition %d, delivered in offset order, each once", p).isEqualTo(expected);
                assertThat(deliveredOn.get(p)).as("partition %d: delivered on the thread that journaled it", p)
                        .hasSize(1).isEqualTo(acknowledgedOn.get(p));
                assertThat(deliveredOn.get(p).iterator().next()).startsWith("sluice-journal-");
            }
            assertThat(memoryThreads).allMatch(name -> name.startsWith("sluice-journal-"));
            assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.getName().startsWith("sluice-subscriber"));
        }
    }
}
