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
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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

    /**
     * Four five-minute cycles of 400 events of 1 KiB each: about 420 KB of records per cycle file, plus Chronicle's index
     * of it (two arrays of 16,384 entries, 256 KiB: the journal indexes every 4th document), about 680 KB written each.
     */
    private static void fourCyclesOf400KiB(Broker broker, AtomicLong now, String topic) throws Exception {
        byte[] value = new byte[1024];
        java.util.Arrays.fill(value, (byte) 'x');
        try (Producer p = broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int cycle = 0; cycle < 4; cycle++) {
                for (int i = 0; i < 400; i++) {
                    p.send(new ProducerRecord(topic, 0, null, value, java.util.List.of(), -1)).get(10, TimeUnit.SECONDS);
                }
                now.addAndGet(TimeUnit.MINUTES.toMillis(5));
            }
        }
    }

    @Test
    void byteRetentionCountsWrittenBytes() throws Exception {
        AtomicLong now = new AtomicLong(1_699_999_800_000L);
        BrokerConfig cfg = BrokerConfig.builder(dir).rollCycle(RollCycleType.FIVE_MINUTELY).clock(now::get)
                .retentionCheckMillis(3_600_000).build();
        try (Broker broker = Broker.open(cfg)) {
            broker.createTopic(TopicConfig.builder("sized").retentionBytes(1_500_000).build());
            fourCyclesOf400KiB(broker, now, "sized");
            TopicPartition tp = new TopicPartition("sized", 0);
            long written = broker.describeTopic("sized").partitions().get(0).journalBytes();
            // what was written (4 x 400 x ~1 KiB plus headers and index), not the sparse, preallocated file lengths
            assertThat(written).isBetween(4L * (400 * 1024 + 256 * 1024), 4L * (2 * 400 * 1024 + 256 * 1024));
            ((io.sluice.core.internal.LocalBroker) broker).applyRetention();
            // 2.7 MB > 1.5 MB: the two oldest cycles go (2.0 MB would still be too much), the newest two stay
            assertThat(cycleFiles(dir.resolve("topics/sized/0"))).isEqualTo(2);
            assertThat(broker.startOffset(tp)).isEqualTo(800);
            assertThat(broker.describeTopic("sized").partitions().get(0).journalBytes()).isLessThanOrEqualTo(1_500_000);
        }
    }

    @Test
    void aConsumerThatFallsBehindRetentionIsToldNotSilentlyMoved() throws Exception {
        AtomicLong now = new AtomicLong(1_699_999_800_000L);
        BrokerConfig cfg = BrokerConfig.builder(dir).rollCycle(RollCycleType.FIVE_MINUTELY).clock(now::get)
                .retentionCheckMillis(3_600_000).build();
        try (Broker broker = Broker.open(cfg)) {
            broker.createTopic(TopicConfig.builder("lag").retentionBytes(1_500_000).build());
            TopicPartition tp = new TopicPartition("lag", 0);
            broker.groups().resetOffsets("strict", java.util.Map.of(tp, 0L));
            try (Consumer strict = broker.newConsumer(ConsumerConfig.builder().groupId("strict").offsetReset(OffsetReset.NONE).build());
                 Consumer lenient = broker.newConsumer(ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).maxPollRecords(10).build())) {
                strict.subscribe("lag"); // at its committed offset 0
                lenient.assign(java.util.Set.of(tp));
                lenient.seek(tp, 0);
                fourCyclesOf400KiB(broker, now, "lag");
                ((io.sluice.core.internal.LocalBroker) broker).applyRetention();
                assertThat(broker.startOffset(tp)).isEqualTo(800);

                assertThatThrownBy(() -> strict.poll(Duration.ofMillis(100)))
                        .isInstanceOf(SluiceException.OffsetOutOfRangeException.class);
                var records = lenient.poll(Duration.ofSeconds(5));
                assertThat(records.get(0).offset()).isEqualTo(800);
                assertThat(lenient.skippedByRetention()).isEqualTo(800);
            }
        }
    }

    static long cycleFiles(Path partitionDir) throws Exception {
        try (Stream<Path> s = Files.list(partitionDir)) {
            return s.filter(f -> f.getFileName().toString().endsWith(".cq4")).count();
        }
    }
}
