package io.sluice.kafka;

import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * kafka-clients 3.9 (the last 3.x line, still in wide use) against the listener, in a child JVM whose class path
 * holds only that client and its runtime dependencies (copied to target/kafka-clients-3.9 by the build) and this
 * module's test classes: a default producer (idempotent, acks=all), one with zstd compression, and a group
 * consumer with manual commits.
 */
class KafkaClients39Test {
    private static final int RECORDS = 2000;

    @TempDir
    Path dir;

    @Test
    void defaultAndZstdProducersAndAGroupConsumerOfKafkaClients39SeeEveryRecordOnce() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir)) {
            kafka.broker.createTopic(TopicConfig.of("old-client", 3));
            Path log = dir.resolve("client-3.9.log");
            List<String> out = run(log, kafka.bootstrap(), "old-client", Integer.toString(RECORDS), "group-39");
            // the producer really was idempotent: it asked for a producer id (slf4j-simple logs to stderr)
            assertThat(Files.readString(log)).contains("ProducerId set to ").contains("Successfully joined group");

            assertThat(out).first().isEqualTo("version 3.9.1");
            assertThat(out).last().isEqualTo("done");
            Map<String, String> acked = new HashMap<>();
            Map<String, String> consumed = new HashMap<>();
            for (String line : out) {
                String[] f = line.split(" ");
                switch (f[0]) {
                    case "acked" -> assertThat(acked.put(f[1], f[2] + "/" + f[3])).as("acked twice: %s", line).isNull();
                    case "consumed" -> assertThat(consumed.put(f[1], f[2] + "/" + f[3])).as("consumed twice: %s", line).isNull();
                    case "failed" -> throw new AssertionError(line);
                    default -> { }
                }
            }
            assertThat(acked).hasSize(2 * RECORDS);
            for (int i = 0; i < RECORDS; i++) {
                assertThat(acked).containsKey("v39-" + i).containsKey("v39z-" + i);
            }
            assertThat(consumed).isEqualTo(acked);

            long stored = 0;
            Map<Integer, Long> ends = new HashMap<>();
            for (int p = 0; p < 3; p++) {
                long end = kafka.broker.endOffset(new TopicPartition("old-client", p));
                ends.put(p, end);
                stored += end;
            }
            assertThat(stored).as("records stored").isEqualTo(2 * RECORDS);
            try (Admin admin = Admin.create(kafka.clientProperties())) {
                Map<org.apache.kafka.common.TopicPartition, OffsetAndMetadata> committed =
                        admin.listConsumerGroupOffsets("group-39").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
                Map<Integer, Long> committedOffsets = new HashMap<>();
                committed.forEach((tp, o) -> committedOffsets.put(tp.partition(), o.offset()));
                assertThat(committedOffsets).isEqualTo(ends);
            }
        }
    }

    private static List<String> run(Path stderr, String... args) throws Exception {
        Path jars = Paths.get("target", "kafka-clients-3.9");
        assertThat(jars).as("kafka-clients 3.9 jars (copied by the build's maven-dependency-plugin)").isDirectory();
        List<String> classPath = new ArrayList<>();
        try (Stream<Path> files = Files.list(jars)) {
            files.filter(f -> f.toString().endsWith(".jar")).forEach(f -> classPath.add(f.toAbsolutePath().toString()));
        }
        assertThat(classPath).anyMatch(f -> f.endsWith("kafka-clients-3.9.1.jar"));
        // this class's own directory (test-classes) for Kafka39Client; no other jar of the test class path
        classPath.add(Paths.get(Kafka39Client.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        List<String> command = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-cp", String.join(File.pathSeparator, classPath), Kafka39Client.class.getName()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectError(stderr.toFile()).start();
        List<String> lines = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = reader.readLine()) != null; ) {
                lines.add(line);
            }
            assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("client exited").isTrue();
            assertThat(process.exitValue()).as("client exit code").isZero();
        } finally {
            process.destroyForcibly();
        }
        return lines;
    }
}
