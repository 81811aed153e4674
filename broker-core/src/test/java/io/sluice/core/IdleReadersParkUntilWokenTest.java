package io.sluice.core;

import io.sluice.testkit.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 12, "wake, don't poll": with the default SLEEPING wait strategy, the threads of an idle broker park without
 * a timer (state {@code WAITING}, never {@code TIMED_WAITING}: no periodic wake-ups), and the next event wakes
 * exactly the readers waiting for it — journal writer, subscriber, and an embedded consumer's poll. The group
 * coordinator's session timer is armed only while a group has members. And "threads for few cores": the journal
 * writers and subscribers of all partitions share {@code journal.threads} + {@code subscriber.threads} threads.
 */
class IdleReadersParkUntilWokenTest {
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void idleJournalWritersAndSubscribersParkWithoutATimerAndTheNextEventWakesThem() throws Exception {
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).ringSize(1024).journalThreads(2).subscriberThreads(2).build())) {
            broker.createTopic(TopicConfig.of("idle", 4));
            broker.createTopic(TopicConfig.of("idle-too", 4));
            List<Long> seen = new CopyOnWriteArrayList<>();
            try (Subscription ignored = broker.subscribe("idle", "probe", (event, endOfBatch) -> seen.add(event.offset()));
                 Subscription alsoIgnored = broker.subscribe("idle-too", "probe", (event, endOfBatch) -> { });
                 Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                // 8 partitions with a subscriber each: 2 journal threads and 2 subscriber threads, not 16 threads
                Await.until(() -> "4 ring threads parked without a timer; now " + ringThreadStates(), DEADLINE,
                        () -> allParkedWithoutTimer(4));

                for (int partition = 0; partition < 4; partition++) {
                    RecordMetadata md = producer.send(ProducerRecord.of("idle", null, "wake").withPartition(partition))
                            .get(30, TimeUnit.SECONDS);
                    assertThat(md.offset()).isZero();
                    // every partition's first event has offset 0: wait for this one's delivery by count (waiting for
                    // "an offset 0 was seen" was already true after the first partition, a race the CI run found)
                    int delivered = partition + 1;
                    Await.until("the subscriber got the event on partition " + partition, DEADLINE, () -> seen.size() == delivered);
                    Await.until(() -> "back to parked without a timer; now " + ringThreadStates(), DEADLINE,
                            () -> allParkedWithoutTimer(4));
                }
                assertThat(seen).containsExactly(0L, 0L, 0L, 0L);
            }
        }
    }

    @Test
    void aPollWaitingOnAnIdlePartitionReturnsTheEventAppendedWhileItWaits() throws Exception {
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).ringSize(1024).build())) {
            broker.createTopic(TopicConfig.of("idle", 4));
            AtomicReference<Thread> pollingThread = new AtomicReference<>();
            CompletableFuture<List<ConsumerRecord>> polled;
            try (Consumer consumer = broker.newConsumer(ConsumerConfig.builder().clientId("waiter").offsetReset(OffsetReset.LATEST).build());
                 Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                consumer.assign(broker.partitionsOf("idle"));
                polled = CompletableFuture.supplyAsync(() -> {
                    pollingThread.set(Thread.currentThread());
                    return consumer.poll(Duration.ofMinutes(5));
                });
                // the poll is parked (until its deadline, or until a journal writer wakes it), not returning empty
                Await.until("the poll parked", DEADLINE, () -> pollingThread.get() != null
                        && pollingThread.get().getState() == Thread.State.TIMED_WAITING);

                RecordMetadata md = producer.send(ProducerRecord.of("idle", null, "wake").withPartition(3)).get(30, TimeUnit.SECONDS);
                List<ConsumerRecord> got = polled.get(60, TimeUnit.SECONDS);
                assertThat(got).extracting(ConsumerRecord::offset).containsExactly(md.offset());
                assertThat(got.get(0).partition()).isEqualTo(3);
            }
        }
    }

    @Test
    void theGroupSessionTimerIsArmedOnlyWhileAGroupHasMembers() throws Exception {
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            broker.createTopic(TopicConfig.of("idle", 2));
            // no member: no timer (the coordinator's thread is not started, or waits without a timeout)
            Await.until(() -> "no session timer armed without members; now " + groupTimerStates(), DEADLINE,
                    () -> groupTimerStates().stream().allMatch(s -> s == Thread.State.WAITING));

            try (Consumer member = broker.newConsumer(ConsumerConfig.builder().groupId("g").clientId("m").build())) {
                member.subscribe("idle");
                member.poll(Duration.ZERO);
                Await.until(() -> "the session timer is armed; now " + groupTimerStates(), DEADLINE,
                        () -> groupTimerStates().equals(List.of(Thread.State.TIMED_WAITING)));
            } // leaves the group
            Await.until(() -> "the session timer disarmed after the last member left; now " + groupTimerStates(), DEADLINE,
                    () -> groupTimerStates().equals(List.of(Thread.State.WAITING)));
        }
    }

    private static List<Thread.State> groupTimerStates() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("sluice-group-sessions"))
                .map(Thread::getState).toList();
    }

    private static Set<Thread> ringThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("sluice-journal-") || t.getName().startsWith("sluice-subscriber-"))
                .collect(Collectors.toSet());
    }

    private static boolean allParkedWithoutTimer(int expected) {
        Set<Thread> threads = ringThreads();
        return threads.size() == expected && threads.stream().allMatch(t -> t.getState() == Thread.State.WAITING);
    }

    private static String ringThreadStates() {
        return ringThreads().stream().map(t -> t.getName() + "=" + t.getState()).sorted().collect(Collectors.joining(", "));
    }
}
