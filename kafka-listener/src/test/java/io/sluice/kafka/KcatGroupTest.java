package io.sluice.kafka;

import io.sluice.core.GroupAdmin;
import io.sluice.core.GroupStatus;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * librdkafka (Debian's kcat, librdkafka 2.0.2) as a balanced-consumer group member, alone or beside a Java member: it enables groups only because
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

    @Test
    void aKcatMemberAndAKafkaConsumerMemberShareAGroupsPartitions() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/kcat")), "kcat is not installed");
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir.resolve("data"))) {
            kafka.broker.createTopic(TopicConfig.of("clicks", 4));
            Properties p = kafka.clientProperties();
            p.put("group.id", "mixed");
            p.put("client.id", "java-member");
            p.put("key.deserializer", StringDeserializer.class.getName());
            p.put("value.deserializer", StringDeserializer.class.getName());
            p.put("session.timeout.ms", "6000");
            p.put("heartbeat.interval.ms", "500");
            Process kcat = null;
            try (KafkaConsumer<String, String> java = new KafkaConsumer<>(p)) {
                java.subscribe(List.of("clicks"));
                pollUntil(java, () -> java.assignment().size() == 4);
                kcat = new ProcessBuilder("/usr/bin/kcat", "-b", kafka.bootstrap(), "-G", "mixed", "clicks", "-q",
                        "-X", "session.timeout.ms=6000", "-X", "client.id=kcat-member")
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.INHERIT).start();
                pollUntil(java, () -> java.assignment().size() == 2);

                GroupStatus s = new GroupAdmin(kafka.broker).describe("mixed");
                assertThat(s.members()).hasSize(2);
                assertThat(s.members().values()).allSatisfy(owned -> assertThat(owned).hasSize(2));
                assertThat(s.members().keySet()).anyMatch(id -> id.startsWith("kcat-member"))
                        .anyMatch(id -> id.startsWith("java-member"));

                kcat.destroy(); // SIGTERM: kcat leaves the group
                assertThat(kcat.waitFor(30, TimeUnit.SECONDS)).isTrue();
                pollUntil(java, () -> java.assignment().size() == 4);
            } finally {
                if (kcat != null) {
                    kcat.destroyForcibly();
                }
            }
        }
    }

    private static void pollUntil(KafkaConsumer<String, String> consumer, java.util.function.BooleanSupplier done) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!done.getAsBoolean()) {
            assertThat(System.nanoTime()).as("in time").isLessThan(deadline);
            consumer.poll(Duration.ofMillis(100));
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
