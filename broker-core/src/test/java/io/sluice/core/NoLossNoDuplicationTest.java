package io.sluice.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.BitSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

class NoLossNoDuplicationTest {
    static final int PRODUCERS = 4;
    static final int PER_PRODUCER = 250_000;

    @TempDir
    Path dir;

    @Test
    void aMillionEventsFromFourThreadsIntoFourPartitionsArriveExactlyOnceInProducerOrder() throws Exception {
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            broker.createTopic(TopicConfig.of("load", 4));
            AtomicLong acked = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(PRODUCERS);
            try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                for (int t = 0; t < PRODUCERS; t++) {
                    final int id = t;
                    Thread th = new Thread(() -> {
                        byte[] key = ("producer-" + id).getBytes();
                        for (int i = 0; i < PER_PRODUCER; i++) {
                            byte[] value = ByteBuffer.allocate(8).putInt(id).putInt(i).array();
                            // round-robin over partitions by sequence, so each producer feeds all four
                            producer.send(new ProducerRecord("load", i % 4, key, value, null, ProducerRecord.NO_TIMESTAMP),
                                    (p, o, e) -> {
                                        if (e != null) {
                                            failure.compareAndSet(null, e);
                                        } else {
                                            acked.incrementAndGet();
                                        }
                                    });
                        }
                        done.countDown();
                    }, "test-producer-" + t);
                    th.start();
                }
                assertThat(done.await(5, TimeUnit.MINUTES)).isTrue();
                producer.flush();
            }
            assertThat(failure.get()).isNull();
            assertThat(acked.get()).isEqualTo((long) PRODUCERS * PER_PRODUCER);

            BitSet[] seen = new BitSet[PRODUCERS];
            int[][] lastSeqPerPartition = new int[PRODUCERS][4];
            for (int t = 0; t < PRODUCERS; t++) {
                seen[t] = new BitSet(PER_PRODUCER);
                java.util.Arrays.fill(lastSeqPerPartition[t], -1);
            }
            long received = 0;
            long duplicates = 0;
            try (Consumer consumer = broker.newConsumer(ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).maxPollRecords(50_000).build())) {
                consumer.subscribe("load");
                while (received < (long) PRODUCERS * PER_PRODUCER) {
                    var batch = consumer.poll(Duration.ofSeconds(5));
                    if (batch.isEmpty()) {
                        break;
                    }
                    for (ConsumerRecord r : batch) {
                        ByteBuffer b = ByteBuffer.wrap(r.value());
                        int id = b.getInt();
                        int seq = b.getInt();
                        if (seen[id].get(seq)) {
                            duplicates++;
                        }
                        seen[id].set(seq);
                        assertThat(seq).as("producer order within a partition").isGreaterThan(lastSeqPerPartition[id][r.partition()]);
                        lastSeqPerPartition[id][r.partition()] = seq;
                        received++;
                    }
                }
                assertThat(consumer.poll(Duration.ofMillis(50))).isEmpty();
            }
            assertThat(duplicates).isZero();
            assertThat(received).isEqualTo((long) PRODUCERS * PER_PRODUCER);
            for (int t = 0; t < PRODUCERS; t++) {
                assertThat(seen[t].cardinality()).isEqualTo(PER_PRODUCER);
            }
        }
    }
}
