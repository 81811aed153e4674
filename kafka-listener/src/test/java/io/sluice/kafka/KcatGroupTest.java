package io.sluice.kafka;

import io.sluice.core.GroupAdmin;
import io.sluice.core.GroupStatus;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * librdkafka (Debian's kcat, librdkafka 2.0.2) as a balanced-consumer group member: it enables groups only because
 * the group APIs' advertised ranges include version 0; it joins, is assigned every partition, commits, and a second
 * run resumes from those commits ({@code -o} is left out: kcat applies it to every assigned partition, over the commits).
 */
class KcatGroupTest {
    @TempDir
    Path dir;

    @Test
    void kcatConsumesAsAGroupMemberCommitsAndResumesFromItsCommits() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/kcat")), "kcat is not installed");
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir.resolve("data"))) {
            kafka.broker.createTopic(TopicConfig.of("clicks", 4));
            List<String> first = produce(kafka, 0, 40);

            assertThat(kcatGroup(kafka)).containsExactlyInAnyOrderElementsOf(first);
            GroupStatus s = new GroupAdmin(kafka.broker).describe("kcat-group");
            assertThat(s.partitions()).extracting(GroupStatus.PartitionLag::committed).containsExactly(10L, 10L, 10L, 10L);

            List<String> second = produce(kafka, 40, 8);
            assertThat(kcatGroup(kafka)).as("resumed from the commits").containsExactlyInAnyOrderElementsOf(second);
        }
    }

    /** Runs {@code kcat -G} until every partition reaches its end (-e); its stdout lines. */
    private List<String> kcatGroup(KafkaListenerFixture kafka) throws IOException, InterruptedException {
        Path out = Files.createTempFile(dir, "kcat", ".out");
        Process p = new ProcessBuilder("/usr/bin/kcat", "-b", kafka.bootstrap(), "-G", "kcat-group", "clicks",
                "-e", "-q", "-X", "auto.offset.reset=earliest", "-X", "session.timeout.ms=6000")
                .redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("kcat -G reached the end of every partition").isTrue();
            assertThat(p.exitValue()).isZero();
        } finally {
            p.destroyForcibly();
        }
        return Files.readAllLines(out, StandardCharsets.UTF_8);
    }

    private static List<String> produce(KafkaListenerFixture kafka, int from, int count) {
        List<String> out = new ArrayList<>();
        try (Producer p = kafka.broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = from; i < from + count; i++) {
                String value = "click-" + i;
                p.send(ProducerRecord.of("clicks", null, value).withPartition(i % 4)).join();
                out.add(value);
            }
        }
        return out;
    }
}
