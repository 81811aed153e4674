package io.sluice.core;

import io.sluice.core.internal.BrokerFront;
import io.sluice.testkit.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 12: embedded producers build record batches per partition ({@link ProducerConfig#lingerMicros()} above 0,
 * {@link ProducerConfig#batchSizeBytes()}), as a {@code RemoteProducer} does. A batch crosses the ring as one slot
 * and is stored as one journal document; offsets stay dense per record, each thread's send order holds per
 * partition, a full ring back-pressures the sender without losing what was accepted, and flush and close publish
 * what is still open.
 */
class EmbeddedBatchingProducerTest {
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void recordsFromSeveralThreadsCrossAsBatchesWithDenseOffsetsInEachThreadsSendOrder() throws Exception {
        int partitions = 4;
        int threads = 4;
        int perThread = 5_000;
        ProducerConfig batching = ProducerConfig.builder().lingerMicros(2_000).batchSizeBytes(4_096).build();
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            broker.createTopic(TopicConfig.of("b", partitions));
            Map<Integer, List<Long>> acked = new ConcurrentHashMap<>();
            AtomicInteger errors = new AtomicInteger();
            try (Producer producer = broker.newProducer(batching)) {
                List<Thread> senders = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int thread = t;
                    senders.add(new Thread(() -> {
                        for (int i = 0; i < perThread; i++) {
                            producer.send(ProducerRecord.of("b", null, thread + ":" + i).withPartition(i % partitions),
                                    (partition, offset, error) -> {
                                        if (error != null) {
                                            errors.incrementAndGet();
                                        } else {
                                            acked.computeIfAbsent(partition, p -> new ArrayList<>());
                                            synchronized (acked.get(partition)) {
                                                acked.get(partition).add(offset);
                                            }
                                        }
                                    });
                        }
                    }, "sender-" + t));
                }
                senders.forEach(Thread::start);
                for (Thread t : senders) {
                    t.join();
                }
                producer.flush();
            }
            assertThat(errors.get()).isZero();
            int perPartition = threads * perThread / partitions;
            for (int p = 0; p < partitions; p++) {
                TopicPartition tp = new TopicPartition("b", p);
                assertThat(acked.get(p)).as("partition %d: one distinct dense offset per record", p)
                        .hasSize(perPartition).doesNotHaveDuplicates()
                        .allSatisfy(o -> assertThat(o).isBetween(0L, perPartition - 1L));
                assertThat(broker.endOffset(tp)).isEqualTo(perPartition);

                // each thread's records, read back, in the order that thread sent them
                Map<Integer, Integer> lastSeen = new HashMap<>();
                try (PartitionReader reader = BrokerFront.of(broker).openReader(tp)) {
                    reader.seek(0);
                    int read = 0;
                    while (read < perPartition) {
                        read += reader.read(1_000, 1 << 20, r -> {
                            String[] v = new String(r.value(), StandardCharsets.UTF_8).split(":");
                            int thread = Integer.parseInt(v[0]);
                            int i = Integer.parseInt(v[1]);
                            assertThat(i).as("thread %s on partition %s", thread, r.partition())
                                    .isGreaterThan(lastSeen.getOrDefault(thread, -1));
                            lastSeen.put(thread, i);
                        });
                    }
                }
                // stored as batches: far fewer journal documents than records
                int documents = 0;
                int records = 0;
                try (PartitionReader reader = BrokerFront.of(broker).openReader(tp)) {
                    reader.seek(0);
                    ByteBuffer buf = ByteBuffer.allocate(1 << 20);
                    List<Integer> starts = new ArrayList<>();
                    while (reader.readBatches(1, length -> {
                        starts.add(buf.position());
                        return buf;
                    }) > 0) {
                        documents++;
                    }
                    for (int start : starts) {
                        records += buf.getInt(start + 57); // RecordBatch v2: record count at byte 57
                    }
                }
                assertThat(records).isEqualTo(perPartition);
                assertThat(documents).as("partition %d: journal documents for %d records", p, perPartition)
                        .isLessThanOrEqualTo(perPartition / 10);
            }
        }
    }

    @Test
    void aBatchThatIsNotFullIsPublishedWhenItsLingerEnds() throws Exception {
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            broker.createTopic(TopicConfig.of("l", 1));
            try (Producer producer = broker.newProducer(ProducerConfig.builder().lingerMicros(20_000).build())) {
                RecordMetadata md = producer.send(ProducerRecord.of("l", "k", "alone")).get(30, TimeUnit.SECONDS);
                assertThat(md.offset()).isZero();
                // and the next batch after it
                assertThat(producer.send(ProducerRecord.of("l", "k", "next")).get(30, TimeUnit.SECONDS).offset()).isEqualTo(1);
            }
        }
    }

    @Test
    void flushAndClosePublishTheOpenBatches() throws Exception {
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            broker.createTopic(TopicConfig.of("f", 1));
            List<CompletableFuture<RecordMetadata>> first = new ArrayList<>();
            List<CompletableFuture<RecordMetadata>> second = new ArrayList<>();
            Producer producer = broker.newProducer(ProducerConfig.builder().lingerMicros(60_000_000).build());
            try {
                for (int i = 0; i < 10; i++) {
                    first.add(producer.send(ProducerRecord.of("f", null, "a" + i)));
                }
                // a minute of linger and 64 KiB of room: nothing is published until flush
                assertThat(first).noneMatch(CompletableFuture::isDone);
                producer.flush();
                assertThat(first).allMatch(f -> f.isDone() && !f.isCompletedExceptionally());
                assertThat(first.stream().map(CompletableFuture::join).map(RecordMetadata::offset).toList())
                        .containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
                for (int i = 0; i < 5; i++) {
                    second.add(producer.send(ProducerRecord.of("f", null, "b" + i)));
                }
                assertThat(second).noneMatch(CompletableFuture::isDone);
            } finally {
                producer.close();
            }
            assertThat(second.stream().map(f -> f.getNow(null)).map(RecordMetadata::offset).toList())
                    .containsExactly(10L, 11L, 12L, 13L, 14L);
            assertThat(broker.endOffset(new TopicPartition("f", 0))).isEqualTo(15);
        }
    }

    @Test
    void aFullRingBackPressuresTheSenderAndEveryAcceptedRecordIsAcknowledgedOrFailedNoneSilentlyLost() throws Exception {
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).ringSize(64).build())) {
            broker.createTopic(TopicConfig.of("p", 1));
            CountDownLatch release = new CountDownLatch(1);
            List<Long> delivered = new ArrayList<>();
            ProducerConfig config = ProducerConfig.builder().lingerMicros(1_000).batchSizeBytes(64).maxBlockMillis(200).build();
            try (Subscription ignored = broker.subscribe("p", "blocked", (event, endOfBatch) -> {
                release.await();
                synchronized (delivered) {
                    delivered.add(event.offset());
                }
            });
                 Producer producer = broker.newProducer(config)) {
                List<Long> acked = new ArrayList<>();
                List<Throwable> failed = new ArrayList<>();
                SendCallback outcome = (partition, offset, error) -> {
                    synchronized (acked) {
                        if (error == null) {
                            acked.add(offset);
                        } else {
                            failed.add(error);
                        }
                    }
                };
                int accepted = 0;
                long result;
                while ((result = producer.trySend(ProducerRecord.of("p", null, "r" + accepted), outcome)) == Producer.ACCEPTED) {
                    accepted++;
                    assertThat(accepted).as("records taken while the subscriber holds the ring").isLessThan(10_000);
                }
                assertThat(result).isEqualTo(Producer.BACK_PRESSURED);
                // a blocking send gives up after maxBlockMillis and says why
                CompletableFuture<RecordMetadata> late = producer.send(ProducerRecord.of("p", null, "late"));
                assertThat(late).failsWithin(Duration.ofSeconds(30)).withThrowableThat()
                        .withCauseInstanceOf(SluiceException.BackPressureException.class);

                release.countDown();
                producer.flush();
                int taken = accepted;
                Await.until("an outcome for every accepted record", DEADLINE, () -> {
                    synchronized (acked) {
                        return acked.size() + failed.size() == taken;
                    }
                });
                synchronized (acked) {
                    // a batch that found no room within maxBlockMillis failed its records, saying why
                    assertThat(failed).allMatch(e -> e instanceof SluiceException.BackPressureException);
                    assertThat(acked).isNotEmpty().doesNotHaveDuplicates();
                    int n = acked.size();
                    Await.until("every acknowledged record delivered", DEADLINE, () -> {
                        synchronized (delivered) {
                            return delivered.size() >= n;
                        }
                    });
                    synchronized (delivered) {
                        // what was acknowledged is what the subscriber got: dense offsets 0..n-1, nothing else
                        assertThat(delivered).hasSize(n);
                        assertThat(new ArrayList<>(acked)).containsExactlyInAnyOrderElementsOf(delivered);
                        for (int i = 0; i < n; i++) {
                            assertThat(delivered.get(i)).isEqualTo(i);
                        }
                    }
                }
            }
        }
    }

    @Test
    void aRefusedBatchWhoseSenderStoppedSendingGetsInOnceTheRingHasRoomWithoutFlush() throws Exception {
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).ringSize(64).build())) {
            broker.createTopic(TopicConfig.of("r", 1));
            CountDownLatch release = new CountDownLatch(1);
            ProducerConfig config = ProducerConfig.builder().lingerMicros(1_000).batchSizeBytes(64).maxBlockMillis(60_000).build();
            try (Subscription ignored = broker.subscribe("r", "blocked", (event, endOfBatch) -> release.await());
                 Producer producer = broker.newProducer(config)) {
                AtomicInteger acked = new AtomicInteger();
                List<Throwable> failed = new ArrayList<>();
                SendCallback outcome = (partition, offset, error) -> {
                    if (error == null) {
                        acked.incrementAndGet();
                    } else {
                        synchronized (failed) {
                            failed.add(error);
                        }
                    }
                };
                int accepted = 0;
                while (producer.trySend(ProducerRecord.of("r", null, "r" + accepted), outcome) == Producer.ACCEPTED) {
                    accepted++;
                    assertThat(accepted).as("records taken while the subscriber holds the ring").isLessThan(10_000);
                }
                // the last batch is sealed and refused, and its sender sends nothing more: only the producer's own
                // linger thread, retrying at growing intervals, can get it in once the subscriber lets the ring move
                int taken = accepted;
                assertThat(acked.get()).isLessThan(taken);
                release.countDown();
                Await.until("every accepted record acknowledged, no flush", DEADLINE, () -> acked.get() == taken);
                synchronized (failed) {
                    assertThat(failed).isEmpty();
                }
                assertThat(broker.endOffset(new TopicPartition("r", 0))).isEqualTo(taken);
            }
        }
    }

    @Test
    void aBatchedRecordKeepsItsOwnTimestampOrGetsTheBrokerClocksTimeWhenItsBatchTakesIt() throws Exception {
        AtomicLong now = new AtomicLong(1_000_000);
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).clock(now::get).build())) {
            broker.createTopic(TopicConfig.of("ts", 1));
            try (Producer producer = broker.newProducer(ProducerConfig.builder().lingerMicros(60_000_000).build())) {
                // the callback forms: the future form stamps the record itself before it reaches the batch
                List<Throwable> errors = new ArrayList<>();
                SendCallback outcome = (partition, offset, error) -> {
                    if (error != null) {
                        synchronized (errors) {
                            errors.add(error);
                        }
                    }
                };
                producer.send(ProducerRecord.of("ts", null, "stamped"), outcome);
                now.set(2_000_000);
                assertThat(producer.trySend(ProducerRecord.of("ts", null, "own").withTimestamp(42L), outcome)).isEqualTo(Producer.ACCEPTED);
                assertThat(producer.trySend(ProducerRecord.of("ts", null, "later"), outcome)).isEqualTo(Producer.ACCEPTED);
                producer.flush();
                synchronized (errors) {
                    assertThat(errors).isEmpty();
                }
            }
            try (Consumer consumer = broker.newConsumer(ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).build())) {
                consumer.subscribe("ts");
                List<ConsumerRecord> got = new ArrayList<>();
                Await.until("the three records read back", DEADLINE, () -> {
                    got.addAll(consumer.poll(Duration.ofMillis(100)));
                    return got.size() >= 3;
                });
                // as stored in the journal's record batch (first timestamp plus each record's delta)
                assertThat(got.stream().map(ConsumerRecord::timestamp).toList()).containsExactly(1_000_000L, 42L, 2_000_000L);
            }
        }
    }
}
