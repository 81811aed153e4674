package io.sluice.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.testkit.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The application logs through Logback: text by default, JSON lines with --log-format json, level by --log-level. */
class LoggingTest {
    @TempDir
    Path dir;

    /** Runs a broker with {@code flags} until its binary port listens, stops it (SIGTERM) and returns its stderr lines. */
    List<String> brokerLog(String... flags) throws Exception {
        List<String> args = new ArrayList<>(List.of("broker", "--data-dir", dir.resolve("data").toString(), "--port", "0", "--http-port", "0"));
        args.addAll(List.of(flags));
        Path stderr = dir.resolve("stderr.log");
        Process p = new ProcessBuilder(ChildJvm.command("256m", SluiceCli.class, args.toArray(String[]::new)))
                .redirectError(stderr.toFile()).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null && !line.contains("binary protocol on")) {
                // the broker prints its ports on stdout once it serves
            }
            assertThat(line).as("the broker announced its port").isNotNull();
        } finally {
            p.destroy(); // SIGTERM: the broker shuts down cleanly
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        }
        return Files.readAllLines(stderr, StandardCharsets.UTF_8);
    }

    @Test
    void jsonLinesCarryLevelLoggerAndMessage() throws Exception {
        List<String> lines = brokerLog("--log-format", "json");
        ObjectMapper json = new ObjectMapper();
        boolean sawBrokerOpen = false;
        for (String line : lines) {
            JsonNode event = json.readTree(line); // every line is one JSON object
            assertThat(event.has("level") && event.has("loggerName") && event.has("formattedMessage") && event.has("timestamp"))
                    .as(line).isTrue();
            sawBrokerOpen |= event.get("formattedMessage").asText().startsWith("broker open in " + dir)
                    && event.get("loggerName").asText().equals("io.sluice.core.internal.LocalBroker");
        }
        assertThat(sawBrokerOpen).as(String.join("\n", lines)).isTrue();
    }

    @Test
    void textIsTheDefaultAndLogLevelWarnHidesInfo() throws Exception {
        List<String> info = brokerLog();
        assertThat(info).anyMatch(l -> l.matches("\\d{4}-\\d\\d-\\d\\dT.* INFO  \\[main\\] io\\.sluice\\.core\\.internal\\.LocalBroker - broker open in .*"));
        List<String> warn = brokerLog("--log-level", "warn");
        assertThat(warn).noneMatch(l -> l.contains(" INFO "));
    }
}
