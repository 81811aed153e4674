package io.sluice.net.client;

import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.net.testing.TestBroker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fetch responses of several MiB over the binary port (max.fetch.bytes 4 MiB): their batches travel in pooled chunks
 * spliced between the response's fields, and a network consumer reads every record once, in order, unchanged, from
 * two partitions at once.
 */
class LargeFetchTest {
    private static final String TOPIC = "large";
    private static final int PER_PARTITION = 6_000;
    private static final int VALUE_BYTES = 1_000;

    @TempDir
    Path dir;
    private TestBroker broker;

    @AfterEach
    void stop() {
        broker.close();
    }

    private static byte[] value(int partition, long n) {
        byte[] v = new byte[VALUE_BYTES];
        for (int i = 0; i < v.length; i++) {
            v[i] = (byte) (partition * 7 + n * 13 + i);
        }
        return v;
    }

    @Test
    void fetchesOfSeveralMiBDeliverEveryRecordOnceInOrder() throws Exception {
        broker = TestBroker.start(dir, b -> b, s -> s.maxFetchBytes(4 << 20));
        broker.broker.createTopic(TopicConfig.of(TOPIC, 2));
        try (Producer producer = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            for (int n = 0; n < PER_PARTITION; n++) {
                for (int p = 0; p < 2; p++) {
                    producer.send(new ProducerRecord(TOPIC, p, null, value(p, n), List.of(), ProducerRecord.NO_TIMESTAMP));
                }
            }
            producer.flush();
        }
        ConsumerConfig config = ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST)
                .maxPollRecords(2 * PER_PARTITION).maxPollBytes(4 << 20).build();
        List<List<ConsumerRecord>> read = List.of(new ArrayList<>(), new ArrayList<>());
        long requestsBefore = broker.server().stats().requests();
        try (RemoteConsumer consumer = new RemoteConsumer(broker.bootstrap(), config)) {
            consumer.assign(Set.of(new TopicPartition(TOPIC, 0), new TopicPartition(TOPIC, 1)));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (read.get(0).size() + read.get(1).size() < 2 * PER_PARTITION && System.nanoTime() < deadline) {
                for (ConsumerRecord r : consumer.poll(Duration.ofSeconds(1))) {
                    read.get(r.partition()).add(r);
                }
            }
        }
        for (int p = 0; p < 2; p++) {
            assertThat(read.get(p)).as("partition %d", p).hasSize(PER_PARTITION);
            for (int n = 0; n < PER_PARTITION; n++) {
                ConsumerRecord r = read.get(p).get(n);
                assertThat(r.offset()).isEqualTo(n);
                assertThat(r.value()).isEqualTo(value(p, n));
            }
        }
        // about 12 MB of batches: responses of at most 1 MiB would take at least 12 requests
        assertThat(broker.server().stats().requests() - requestsBefore).as("requests, each a response of up to 4 MiB")
                .isLessThan(12);
    }
}
