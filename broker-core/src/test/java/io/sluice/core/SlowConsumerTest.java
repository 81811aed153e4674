package io.sluice.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Consumers pull from the journal, so a consumer that stops reading holds no broker memory and never slows
 * producers: only live subscribers (which run on the ring) can back-pressure.
 */
class SlowConsumerTest {
    @TempDir
    Path dir;

    @Test
    void aConsumerThatStopsReadingNeitherStallsProducersNorBuffersEvents() throws Exception {
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).ringSize(1024).build())) {
            broker.createTopic(TopicConfig.of("t", 1));
            Consumer stalled = broker.newConsumer(ConsumerConfig.builder().groupId("slow").offsetReset(OffsetReset.EARLIEST).build());
            stalled.subscribe("t");
            assertThat(stalled.poll(Duration.ZERO)).isEmpty();
            // the ring holds 1024 events; send 200 times that with no blocking allowed
            try (Producer producer = broker.newProducer(ProducerConfig.builder().maxBlockMillis(5_000).build())) {
                byte[] value = new byte[100];
                for (int i = 0; i < 200_000; i++) {
                    producer.send(ProducerRecord.of("t", value), (p, o, e) -> {
                        if (e != null) {
                            throw new AssertionError("send failed", e);
                        }
                    });
                }
                producer.flush();
            }
            BrokerMetrics.PartitionStats stats = broker.metrics().partitions().get(0);
            assertThat(stats.journaled()).isEqualTo(200_000);
            assertThat(stats.ringOccupancy()).isZero();
            // the stalled consumer still finds everything where it left off
            assertThat(stalled.position(new TopicPartition("t", 0))).isZero();
            long read = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (read < 200_000 && System.nanoTime() < deadline) {
                read += stalled.poll(Duration.ofSeconds(1)).size();
            }
            assertThat(read).isEqualTo(200_000);
            stalled.close();
        }
    }
}
