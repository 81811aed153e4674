package io.sluice.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * The journal on a small tmpfs fills up: producers get a JournalException, nothing acknowledged is lost, and the
 * broker accepts writes again once space returns. Needs root to mount the tmpfs; skipped (not passed) otherwise.
 */
class DiskFullTest {
    @TempDir
    Path tmp;
    Path mount;
    boolean mounted;

    @BeforeEach
    void mountSmallTmpfs() throws Exception {
        mount = tmp.resolve("small-disk");
        Files.createDirectories(mount);
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", mount.toString())
                .redirectErrorStream(true).start();
        mounted = p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        assumeThat(mounted).as("can mount a tmpfs (needs root)").isTrue();
    }

    @AfterEach
    void unmount() throws Exception {
        if (mounted) {
            new ProcessBuilder("umount", "-l", mount.toString()).start().waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void aFullDiskRefusesWritesLosesNothingAcknowledgedAndRecovers() throws Exception {
        Path ballast = mount.resolve("ballast");
        Files.write(ballast, new byte[6 << 20]);
        BrokerConfig config = BrokerConfig.builder(mount.resolve("data")).minFreeDiskBytes(8L << 20).build();
        long acked = 0;
        long refused = 0;
        try (Broker broker = Broker.open(config); Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            broker.createTopic(TopicConfig.of("t", 1));
            byte[] kib = new byte[1024];
            while (refused == 0 && acked < 100_000) {
                try {
                    producer.send(ProducerRecord.of("t", kib)).get(10, TimeUnit.SECONDS);
                    acked++;
                } catch (ExecutionException e) {
                    assertThat(e.getCause()).isInstanceOf(SluiceException.JournalException.class).hasMessageContaining("disk full");
                    refused++;
                }
            }
            assertThat(refused).isEqualTo(1);
            assertThat(acked).isGreaterThan(1000);
            assertThat(broker.endOffset(new TopicPartition("t", 0))).isEqualTo(acked);

            Files.delete(ballast); // space returns
            RecordMetadata md = producer.send(ProducerRecord.of("t", kib)).get(10, TimeUnit.SECONDS);
            assertThat(md.offset()).isEqualTo(acked);
            acked++;
        }
        try (Broker reopened = Broker.open(config)) {
            assertThat(reopened.endOffset(new TopicPartition("t", 0))).isEqualTo(acked);
        }
    }
}
