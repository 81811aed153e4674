package io.sluice.core;

import io.sluice.core.internal.BrokerFront;
import io.sluice.records.CheckedBatch;
import io.sluice.records.RecordBatchChecker;
import io.sluice.records.RecordBatchWriter;
import io.sluice.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link BrokerFront#tryAppendBatch}, what a network produce does with a producer's record batch: one ring slot and one
 * journal document holding the batch's bytes unchanged but the base offset, dense offsets shared with single events,
 * every event handed to live subscribers, and back-pressure (not memory) when a partition's batches wait too long.
 */
class BatchAppendTest {
    @TempDir
    Path dir;
    private Broker broker;
    private final TopicPartition tp = new TopicPartition("t", 0);

    @AfterEach
    void close() {
        if (broker != null) {
            broker.close();
        }
    }

    /** A RecordBatch v2 of {@code count} events "{tag}-{i}" (base offset 999, which the journal must replace). */
    static byte[] batch(String tag, int count) {
        ByteBuffer out = ByteBuffer.allocate(1 << 16);
        RecordBatchWriter w = new RecordBatchWriter();
        w.begin(out, 0);
        for (int i = 0; i < count; i++) {
            byte[] key = ("k" + i).getBytes(StandardCharsets.UTF_8);
            byte[] value = (tag + "-" + i).getBytes(StandardCharsets.UTF_8);
            w.append(1_000L + i, key, key.length, value, value.length, i % 2 == 0 ? List.of() : List.of(Header.of("h", "v" + i)));
        }
        return java.util.Arrays.copyOf(out.array(), w.finish(999));
    }

    /** The batch as a network front hands it over: checked. */
    private static CheckedBatch checked(byte[] batch) {
        return new RecordBatchChecker().checkProduced(ByteBuffer.wrap(batch), 0, batch.length, 1 << 20);
    }

    private static long append(Broker broker, TopicPartition tp, byte[] batch, int count, Acks acks) throws Exception {
        CompletableFuture<Long> base = new CompletableFuture<>();
        long result = BrokerFront.of(broker).tryAppendBatch(tp, checked(batch), acks, (p, offset, error) -> {
            if (error != null) {
                base.completeExceptionally(error);
            } else {
                base.complete(offset);
            }
        });
        assertThat(result).isEqualTo(Producer.ACCEPTED);
        return base.get(10, TimeUnit.SECONDS);
    }

    private List<ConsumerRecord> readAll(long end) {
        List<ConsumerRecord> out = new ArrayList<>();
        try (PartitionReader reader = BrokerFront.of(broker).openReader(tp)) {
            while (reader.position() < end) {
                reader.read(1000, 1 << 20, out::add);
            }
        }
        return out;
    }

    @Test
    void aBatchIsStoredAsItCameBetweenSingleEventsWithDenseOffsets() throws Exception {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("t", 1));
        try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            producer.send(ProducerRecord.of("t", "single-0".getBytes(StandardCharsets.UTF_8))).get();
            producer.send(ProducerRecord.of("t", "single-1".getBytes(StandardCharsets.UTF_8))).get();
            byte[] sent = batch("a", 5);
            assertThat(append(broker, tp, sent, 5, Acks.JOURNAL)).isEqualTo(2);
            assertThat(append(broker, tp, batch("b", 3), 3, Acks.SYNC)).isEqualTo(7);
            assertThat(producer.send(ProducerRecord.of("t", "single-2".getBytes(StandardCharsets.UTF_8))).get().offset()).isEqualTo(10);

            List<String> values = new ArrayList<>();
            List<Long> offsets = new ArrayList<>();
            for (ConsumerRecord r : readAll(11)) {
                values.add(new String(r.value(), StandardCharsets.UTF_8));
                offsets.add(r.offset());
            }
            assertThat(values).containsExactly("single-0", "single-1", "a-0", "a-1", "a-2", "a-3", "a-4", "b-0", "b-1", "b-2", "single-2");
            assertThat(offsets).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
            assertThat(broker.endOffset(tp)).isEqualTo(11);

            // the stored document is the sent batch, byte for byte, with the base offset the journal assigned
            try (PartitionReader reader = BrokerFront.of(broker).openReader(tp)) {
                reader.seek(4);
                ByteBuffer stored = ByteBuffer.allocate(1 << 16);
                reader.readBatches(1, length -> stored);
                byte[] expected = sent.clone();
                ByteBuffer.wrap(expected).putLong(0, 2);
                assertThat(Arrays.copyOf(stored.array(), stored.position())).isEqualTo(expected);
            }
            List<ConsumerRecord> batchA = readAll(11).subList(2, 7);
            assertThat(batchA.get(1).headers()).containsExactly(Header.of("h", "v1"));
            assertThat(batchA.get(1).key()).isEqualTo("k1".getBytes(StandardCharsets.UTF_8));
            assertThat(batchA.get(4).timestamp()).isEqualTo(1_004L);
        }
    }

    @Test
    void aBatchSurvivesARestartAndTheNextEventsFollowIt() throws Exception {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("t", 1));
        append(broker, tp, batch("a", 4), 4, Acks.SYNC);
        broker.close();
        broker = Broker.open(BrokerConfig.builder(dir).build());
        assertThat(broker.endOffset(tp)).isEqualTo(4);
        assertThat(append(broker, tp, batch("b", 2), 2, Acks.JOURNAL)).isEqualTo(4);
        assertThat(readAll(6)).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                .containsExactly("a-0", "a-1", "a-2", "a-3", "b-0", "b-1");
    }

    @Test
    void subscribersSeeEveryEventOfABatchWithItsOffsetOnJournaledAndMemoryOnlyTopics() throws Exception {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("t", 1));
        broker.createTopic(TopicConfig.builder("m").partitions(1).journaled(false).build());
        for (String topic : List.of("t", "m")) {
            List<String> seen = new ArrayList<>();
            CountDownLatch all = new CountDownLatch(6);
            try (Subscription ignored = broker.subscribe(topic, "s", (event, endOfBatch) -> {
                String key = event.keyBuffer() == null ? "null" : new String(event.keyBuffer(), 0, event.keyLength(), StandardCharsets.UTF_8);
                synchronized (seen) {
                    seen.add(event.offset() + ":" + key + ":" + new String(event.valueBuffer(), 0, event.valueLength(), StandardCharsets.UTF_8)
                            + ":" + event.timestamp());
                }
                all.countDown();
            })) {
                TopicPartition p = new TopicPartition(topic, 0);
                Acks acks = topic.equals("t") ? Acks.JOURNAL : Acks.MEMORY;
                append(broker, p, batch("x", 2), 2, acks);
                append(broker, p, batch("yy", 4), 4, acks);
                assertThat(all.await(10, TimeUnit.SECONDS)).isTrue();
            }
            String o = topic.equals("t") ? "" : "-1";
            if (topic.equals("t")) {
                assertThat(seen).containsExactly("0:k0:x-0:1000", "1:k1:x-1:1001",
                        "2:k0:yy-0:1000", "3:k1:yy-1:1001", "4:k2:yy-2:1002", "5:k3:yy-3:1003");
            } else {
                assertThat(seen).containsExactly(o + ":k0:x-0:1000", o + ":k1:x-1:1001",
                        o + ":k0:yy-0:1000", o + ":k1:yy-1:1001", o + ":k2:yy-2:1002", o + ":k3:yy-3:1003");
            }
        }
    }

    @Test
    void batchesWaitingBehindASlowSubscriberBackPressureInsteadOfHoldingMemory() throws Exception {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("t", 1));
        CountDownLatch release = new CountDownLatch(1);
        List<Long> delivered = new ArrayList<>();
        try (Subscription ignored = broker.subscribe("t", "slow", (event, endOfBatch) -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            synchronized (delivered) {
                delivered.add(event.offset());
            }
        })) {
            byte[] batch = batch("z", 10);
            int accepted = 0;
            long result;
            while ((result = BrokerFront.of(broker).tryAppendBatch(tp, checked(batch), Acks.JOURNAL, (p, o, e) -> { })) == Producer.ACCEPTED) {
                accepted++;
                assertThat(accepted).as("batches taken while nothing is released").isLessThanOrEqualTo(64);
            }
            assertThat(result).isEqualTo(Producer.BACK_PRESSURED);
            assertThat(accepted).isGreaterThan(0);
            assertThat(broker.metrics().partitions().get(0).backPressured()).isGreaterThan(0);
            release.countDown();
            int expected = accepted * 10;
            Await.until("every accepted event delivered", Duration.ofSeconds(10), () -> size(delivered) >= expected);
            synchronized (delivered) {
                assertThat(delivered).hasSize(expected);
                for (int i = 0; i < expected; i++) {
                    assertThat(delivered.get(i)).isEqualTo(i);
                }
            }
            // room again once the subscriber moved on
            assertThat(append(broker, tp, batch, 10, Acks.JOURNAL)).isEqualTo(expected);
        }
    }

    private static int size(List<Long> list) {
        synchronized (list) {
            return list.size();
        }
    }

    /**
     * The thread a batch's acknowledgement ran on. An acknowledgement on the calling thread has run before
     * {@code tryAppendBatch} returned (checked here); one on the journal thread may come before or after the return,
     * as that thread is fast enough to win the race, so only the thread is compared.
     */
    private String acknowledgingThread(Acks acks) throws Exception {
        CompletableFuture<String> thread = new CompletableFuture<>();
        long result = BrokerFront.of(broker).tryAppendBatch(tp, checked(batch("c", 2)), acks,
                (p, offset, error) -> thread.complete(Thread.currentThread().getName() + (error == null ? "" : " " + error)));
        assertThat(result).isEqualTo(Producer.ACCEPTED);
        boolean doneAtReturn = thread.isDone();
        String name = thread.get(10, TimeUnit.SECONDS);
        if (name.equals(Thread.currentThread().getName())) {
            assertThat(doneAtReturn).as("an acknowledgement on the caller's thread runs inside tryAppendBatch").isTrue();
        }
        return name;
    }

    /**
     * A JOURNAL batch's acknowledging thread, the batch sent again (polled, up to 10 s) until one is acknowledged on
     * the calling thread: the journal thread takes the writer for a moment in each duty cycle.
     */
    private String acknowledgedOnceIdle() {
        String caller = Thread.currentThread().getName();
        AtomicReference<String> last = new AtomicReference<>();
        Await.until(() -> "a JOURNAL batch acknowledged on its caller; the last one on " + last.get(), Duration.ofSeconds(10), () -> {
            try {
                last.set(acknowledgingThread(Acks.JOURNAL));
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            return last.get().equals(caller);
        });
        return last.get();
    }

    @Test
    void anIdleJournalWriterLetsTheCallerJournalItsBatchAndAnswerOnItsOwnThread() throws Exception {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("t", 1));
        String caller = Thread.currentThread().getName();
        assertThat(acknowledgedOnceIdle()).isEqualTo(caller);
        // SYNC waits for the journal thread's group commit (an msync): never on the caller
        assertThat(acknowledgingThread(Acks.SYNC)).startsWith("sluice-journal");
        // the journal thread lets go of the writer just after that acknowledgement, so a batch right behind it may
        // still find the writer busy (and go to the journal thread): the caller's own append comes once it is idle
        assertThat(acknowledgedOnceIdle()).isEqualTo(caller);
        long end = broker.endOffset(tp);
        assertThat(readAll(end)).extracting(ConsumerRecord::offset)
                .containsExactlyElementsOf(java.util.stream.LongStream.range(0, end).boxed().toList());
        broker.close();

        broker = Broker.open(BrokerConfig.builder(dir).journalCallerAppends(false).build());
        for (int i = 0; i < 5; i++) {
            assertThat(acknowledgingThread(Acks.JOURNAL)).startsWith("sluice-journal");
        }
        assertThat(broker.endOffset(tp)).isEqualTo(end + 10);
    }

    /**
     * What the HTTP front does with a request's events: sends through a producer inside
     * {@link BrokerFront#sendJournalingHere}, so they are journaled (one document per partition) and acknowledged on
     * the calling thread; a topic wider than {@link BrokerFront#MAX_PARTITIONS_HELD} is left to the journal threads.
     */
    @Test
    void sendsMadeInsideSendJournalingHereAreJournaledAndAcknowledgedOnTheCallersThread() throws Exception {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("t", 2));
        broker.createTopic(TopicConfig.of("wide", BrokerFront.MAX_PARTITIONS_HELD + 1));
        String caller = Thread.currentThread().getName();
        try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            // the journal thread's duty cycle takes each writer for a moment: the ten sends are made again (polled, up
            // to 10 s) until both partitions' writers were idle when they began
            AtomicReference<List<String>> acknowledgedOn = new AtomicReference<>();
            AtomicLong sent = new AtomicLong();
            Await.until(() -> "ten sends acknowledged before sendJournalingHere returned; the last ones on " + acknowledgedOn.get(),
                    Duration.ofSeconds(10), () -> {
                        List<String> threads = sendTen(producer, "t");
                        sent.addAndGet(10);
                        acknowledgedOn.set(threads);
                        if (threads.size() == 10 && threads.stream().allMatch(caller::equals)) {
                            return true;
                        }
                        Await.until("every acknowledgement", Duration.ofSeconds(10), () -> threads.size() == 10);
                        return false;
                    });
            assertThat(acknowledgedOn.get()).as("acknowledged before sendJournalingHere returned").hasSize(10).allMatch(caller::equals);
            assertThat(broker.endOffset(tp) + broker.endOffset(new TopicPartition("t", 1))).isEqualTo(sent.get());

            List<String> wide = sendTen(producer, "wide");
            Await.until("every acknowledgement", Duration.ofSeconds(10), () -> wide.size() == 10);
            assertThat(wide).allMatch(name -> name.startsWith("sluice-journal"));
        }
    }

    /** Ten sends inside {@link BrokerFront#sendJournalingHere}; returns the acknowledging threads, as they come. */
    private List<String> sendTen(Producer producer, String topic) {
        List<String> acknowledgedOn = java.util.Collections.synchronizedList(new ArrayList<>());
        BrokerFront.of(broker).sendJournalingHere(topic, () -> {
            for (int i = 0; i < 10; i++) {
                long result = producer.trySend(ProducerRecord.of(topic, "k" + i, "v" + i),
                        (p, offset, error) -> acknowledgedOn.add(Thread.currentThread().getName() + (error == null ? "" : " " + error)));
                assertThat(result).isEqualTo(Producer.ACCEPTED);
            }
        });
        return acknowledgedOn;
    }

    /**
     * Callers journaling their own batches, the journal thread writing the others (single events, and batches that
     * found the writer busy), one writer at a time: every acknowledgement exactly once, dense offsets in each
     * sender's order, every event delivered to a subscriber that runs on the journal thread (which a caller's append
     * must wake).
     */
    @Test
    void callersAndTheJournalThreadTakeTurnsAtTheWriterWithoutLosingOrReorderingAnything() throws Exception {
        broker = Broker.open(BrokerConfig.builder(dir).journalThreads(1).subscriberThreads(0).build());
        broker.createTopic(TopicConfig.of("t", 1));
        int appenders = 3;
        int batches = 1_500;
        int singles = 3_000;
        int total = appenders * batches * 3 + singles;
        List<Long> delivered = new ArrayList<>();
        AtomicInteger acknowledgedHere = new AtomicInteger();
        AtomicInteger acknowledgedByCallers = new AtomicInteger();
        AtomicInteger batchAcknowledgements = new AtomicInteger();
        java.util.concurrent.ConcurrentHashMap<String, Long> acknowledged = new java.util.concurrent.ConcurrentHashMap<>();
        try (Subscription ignored = broker.subscribe("t", "s", (event, endOfBatch) -> {
            synchronized (delivered) {
                delivered.add(event.offset());
            }
        })) {
            List<Thread> threads = new ArrayList<>();
            for (int a = 0; a < appenders; a++) {
                String tag = "a" + a;
                threads.add(new Thread(() -> {
                    for (int b = 0; b < batches; b++) {
                        String id = tag + "/" + b;
                        Thread self = Thread.currentThread();
                        CheckedBatch batch = checked(batch(id, 3));
                        long result;
                        while ((result = BrokerFront.of(broker).tryAppendBatch(tp, batch, Acks.JOURNAL, (p, offset, error) -> {
                            batchAcknowledgements.incrementAndGet();
                            if (Thread.currentThread() == self) {
                                acknowledgedHere.incrementAndGet();
                            }
                            if (Thread.currentThread().getName().startsWith("appender-")) {
                                acknowledgedByCallers.incrementAndGet();
                            }
                            acknowledged.put(id, error == null ? offset : -1);
                        })) == Producer.BACK_PRESSURED) {
                            Thread.onSpinWait();
                        }
                        assertThat(result).isEqualTo(Producer.ACCEPTED);
                    }
                }, "appender-" + a));
            }
            threads.add(new Thread(() -> {
                try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                    List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
                    for (int i = 0; i < singles; i++) {
                        sent.add(producer.send(ProducerRecord.of("t", ("single-" + i).getBytes(StandardCharsets.UTF_8))));
                    }
                    for (int i = 0; i < singles; i++) {
                        acknowledged.put("single/" + i, sent.get(i).join().offset());
                    }
                }
            }, "producer"));
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join(60_000);
                assertThat(t.isAlive()).as(t.getName() + " finished").isFalse();
            }
            Await.until("every acknowledgement", Duration.ofSeconds(10), () -> acknowledged.size() == appenders * batches + singles);
            Await.until("every event delivered", Duration.ofSeconds(10), () -> size(delivered) == total);
        }
        assertThat(acknowledged.values()).doesNotContain(-1L);
        assertThat(batchAcknowledgements.get()).as("one acknowledgement per batch").isEqualTo(appenders * batches);
        assertThat(broker.endOffset(tp)).isEqualTo(total);
        synchronized (delivered) {
            for (int i = 0; i < total; i++) {
                assertThat(delivered.get(i)).isEqualTo(i);
            }
        }
        // every event sits at the offset its sender was told, and each sender's events are in its order
        java.util.Map<String, Long> last = new java.util.HashMap<>();
        for (ConsumerRecord r : readAll(total)) {
            String value = new String(r.value(), StandardCharsets.UTF_8);
            String sender;
            if (value.startsWith("single-")) {
                sender = "single";
                assertThat(acknowledged.get("single/" + value.substring(7))).isEqualTo(r.offset());
            } else {
                String id = value.substring(0, value.lastIndexOf('-'));
                int i = Integer.parseInt(value.substring(value.lastIndexOf('-') + 1));
                sender = id.substring(0, id.indexOf('/'));
                assertThat(acknowledged.get(id) + i).as(value).isEqualTo(r.offset());
            }
            Long previous = last.put(sender, r.offset());
            assertThat(previous == null || previous < r.offset()).as(value + " after its sender's earlier events").isTrue();
        }
        // not asserted (it depends on the scheduler), but shown: how many batches the callers journaled
        System.out.println("batches journaled by a caller: " + acknowledgedByCallers.get() + " of " + appenders * batches
                + ", by their own caller: " + acknowledgedHere.get());
    }

    @Test
    void unknownPartitionsAndDurableAcksOnAMemoryOnlyTopicAreRefused() {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("t", 2));
        broker.createTopic(TopicConfig.builder("m").partitions(1).journaled(false).build());
        byte[] batch = batch("a", 1);
        assertThatThrownBy(() -> BrokerFront.of(broker).tryAppendBatch(new TopicPartition("t", 2), checked(batch), Acks.JOURNAL, (p, o, e) -> { }))
                .isInstanceOf(SluiceException.InvalidConfigException.class).hasMessageContaining("[0, 2)");
        assertThatThrownBy(() -> BrokerFront.of(broker).tryAppendBatch(new TopicPartition("nope", 0), checked(batch), Acks.JOURNAL, (p, o, e) -> { }))
                .isInstanceOf(SluiceException.UnknownTopicException.class);
        assertThatThrownBy(() -> BrokerFront.of(broker).tryAppendBatch(new TopicPartition("m", 0), checked(batch), Acks.JOURNAL, (p, o, e) -> { }))
                .isInstanceOf(SluiceException.InvalidConfigException.class).hasMessageContaining("MEMORY");
        broker.close();
        assertThat(BrokerFront.of(broker).tryAppendBatch(tp, checked(batch), Acks.JOURNAL, (p, o, e) -> { })).isEqualTo(Producer.CLOSED);
        broker = null;
    }
}
