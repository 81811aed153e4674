package io.sluice.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Retention removes whole roll-cycle files; time is a manual clock, so cycles roll without sleeping. */
class RetentionTest {
    @TempDir
    Path dir;

    @Test
    void retentionByAgeRemovesWholeOldCyclesAndConsumersStartAtTheNewStart() throws Exception {
        AtomicLong now = new AtomicLong(1_699_999_800_000L); // on a 5-minute boundary
        BrokerConfig cfg = BrokerConfig.builder(dir).rollCycle(RollCycleType.FIVE_MINUTELY).clock(now::get)
                .retentionCheckMillis(3_600_000).build();
        try (Broker broker = Broker.open(cfg)) {
            broker.createTopic(TopicConfig.builder("logs").retentionMillis(TimeUnit.MINUTES.toMillis(12)).build());
            try (Producer p = broker.newProducer(ProducerConfig.DEFAULT)) {
                for (int cycle = 0; cycle < 5; cycle++) {
                    for (int i = 0; i < 10; i++) {
                        p.send(ProducerRecord.of("logs", null, "c" + cycle + "-" + i)).get(10, TimeUnit.SECONDS);
                    }
                    now.addAndGet(TimeUnit.MINUTES.toMillis(5));
                }
            }
            assertThat(cycleFiles(dir.resolve("topics/logs/0"))).isEqualTo(5);
            ((io.sluice.core.internal.LocalBroker) broker).applyRetention();
            // now is 25 min after the first cycle began: cycles ending 12+ min ago are gone (the first two)
            assertThat(cycleFiles(dir.resolve("topics/logs/0"))).isEqualTo(3);
            TopicPartition tp = new TopicPartition("logs", 0);
            assertThat(broker.startOffset(tp)).isEqualTo(20);
            assertThat(broker.endOffset(tp)).isEqualTo(50);
            try (Consumer c = broker.newConsumer(ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).build())) {
                c.assign(java.util.Set.of(tp));
                var records = c.poll(Duration.ofSeconds(5));
                assertThat(records.get(0).offset()).isEqualTo(20);
                assertThat(records.get(0).valueAsString()).isEqualTo("c2-0");
            }
        }
    }

    @Test
    void retentionBySizeKeepsTheNewestFile() throws Exception {
        AtomicLong now = new AtomicLong(1_699_999_800_000L); // on a 5-minute boundary
        BrokerConfig cfg = BrokerConfig.builder(dir).rollCycle(RollCycleType.FIVE_MINUTELY).clock(now::get).build();
        try (Broker broker = Broker.open(cfg)) {
            broker.createTopic(TopicConfig.builder("small").retentionBytes(1).build());
            try (Producer p = broker.newProducer(ProducerConfig.DEFAULT)) {
                for (int cycle = 0; cycle < 3; cycle++) {
                    p.send(ProducerRecord.of("small", null, "x" + cycle)).get(10, TimeUnit.SECONDS);
                    now.addAndGet(TimeUnit.MINUTES.toMillis(5));
                }
            }
            ((io.sluice.core.internal.LocalBroker) broker).applyRetention();
            assertThat(cycleFiles(dir.resolve("topics/small/0"))).isEqualTo(1);
            assertThat(broker.startOffset(new TopicPartition("small", 0))).isEqualTo(2);
        }
        // offsets stay dense after reopening a trimmed partition
        try (Broker broker = Broker.open(cfg); Producer p = broker.newProducer(ProducerConfig.DEFAULT)) {
            assertThat(p.send(ProducerRecord.of("small", null, "next")).get().offset()).isEqualTo(3);
        }
    }

    static long cycleFiles(Path partitionDir) throws Exception {
        try (Stream<Path> s = Files.list(partitionDir)) {
            return s.filter(f -> f.getFileName().toString().endsWith(".cq4")).count();
        }
    }
}
