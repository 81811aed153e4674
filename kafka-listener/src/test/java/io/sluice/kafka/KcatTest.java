package io.sluice.kafka;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * librdkafka (Debian's 2.0.2, through kcat) produces with each codec and consumes: the listener's advertised ranges
 * let it turn compression on (Produce includes v0), and its Fetch/ListOffsets/Metadata versions are answered.
 * kcat must be installed (scripts/test.sh installs it).
 */
class KcatTest {
    @TempDir
    Path dir;

    private static String run(Path workDir, String stdin, String... command) throws IOException, InterruptedException {
        Path in = workDir.resolve("stdin-" + System.nanoTime());
        Files.writeString(in, stdin, StandardCharsets.UTF_8);
        Path out = workDir.resolve("stdout-" + System.nanoTime());
        Process process = new ProcessBuilder(command).redirectInput(in.toFile()).redirectOutput(out.toFile())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " did not finish within 60 s");
        }
        assertThat(process.exitValue()).as(String.join(" ", command)).isZero();
        return Files.readString(out, StandardCharsets.UTF_8);
    }

    @Test
    void kcatProducesWithEveryCodecAndConsumesAndSluiceReadsTheSameRecords() throws Exception {
        Path work = Files.createDirectories(dir.resolve("kcat"));
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir.resolve("data"))) {
            kafka.broker.createTopic(TopicConfig.of("kcat", 1));
            List<String> expected = new ArrayList<>();
            for (String codec : List.of("none", "gzip", "snappy", "lz4", "zstd")) {
                List<String> lines = IntStream.range(0, 50).mapToObj(i -> codec + "-" + i).toList();
                run(work, String.join("\n", lines) + "\n", kcat(), "-b", kafka.bootstrap(), "-P", "-t", "kcat", "-p", "0", "-z", codec);
                expected.addAll(lines);
            }
            String consumed = run(work, "", kcat(), "-b", kafka.bootstrap(), "-C", "-t", "kcat", "-p", "0", "-o", "beginning",
                    "-e", "-q", "-f", "%o %s\\n");
            List<String> rows = consumed.lines().toList();
            assertThat(rows).hasSize(expected.size());
            for (int i = 0; i < rows.size(); i++) {
                assertThat(rows.get(i)).isEqualTo(i + " " + expected.get(i));
            }
            try (Consumer sluice = kafka.broker.newConsumer(ConsumerConfig.builder().build())) {
                TopicPartition tp = new TopicPartition("kcat", 0);
                sluice.assign(Set.of(tp));
                sluice.seekToBeginning(Set.of(tp));
                List<String> read = new ArrayList<>();
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (read.size() < expected.size() && System.nanoTime() < deadline) {
                    for (ConsumerRecord r : sluice.poll(Duration.ofMillis(100))) {
                        read.add(r.valueAsString());
                    }
                }
                assertThat(read).containsExactlyElementsOf(expected);
            }
        }
    }

    private static String kcat() {
        for (String name : List.of("kcat", "kafkacat")) {
            for (String path : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
                if (Files.isExecutable(Path.of(path, name))) {
                    return Path.of(path, name).toString();
                }
            }
        }
        throw new IllegalStateException("kcat is not installed (apt-get install kcat; scripts/test.sh installs it)");
    }
}
