package io.sluice.net.metrics;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.OffsetReset;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.net.client.RemoteAdmin;
import io.sluice.net.http.HttpApiConfig;
import io.sluice.net.http.HttpApiServer;
import io.sluice.net.testing.TestBroker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code promtool check metrics} (Debian's {@code prometheus} package; {@code scripts/test.sh} installs it) finds
 * nothing in a live broker's {@code /metrics}: with topics, traffic on both ports, latencies and consumer groups.
 */
class PromtoolCheckTest {
    @TempDir
    Path dir;

    static Path promtool() {
        for (String candidate : new String[] {"/usr/bin/promtool", "/usr/local/bin/promtool"}) {
            if (Files.isExecutable(Path.of(candidate))) {
                return Path.of(candidate);
            }
        }
        return null;
    }

    /** GET /metrics of a broker with traffic on both ports, a consumer group and every series family present. */
    static String liveMetrics(Path dir) throws Exception {
        MetricsRegistry registry = new MetricsRegistry();
        try (TestBroker broker = TestBroker.start(dir.resolve("data"));
             AutoCloseable binary = broker.server().registerMetrics(registry);
             HttpApiServer http = new HttpApiServer(HttpApiConfig.builder().port(0).build(), broker.broker, registry)) {
            try (RemoteAdmin admin = new RemoteAdmin(broker.bootstrap())) {
                admin.createTopic(TopicConfig.of("orders", 2));
            }
            try (var p = broker.broker.newProducer(ProducerConfig.DEFAULT)) {
                for (int i = 0; i < 100; i++) {
                    p.send(ProducerRecord.of("orders", "k" + i, "v" + i)).get(10, TimeUnit.SECONDS);
                }
            }
            try (Consumer c = broker.broker.newConsumer(ConsumerConfig.builder().groupId("billing")
                    .offsetReset(OffsetReset.EARLIEST).build())) {
                c.subscribe("orders");
                int seen = 0;
                while (seen < 10) {
                    seen += c.poll(Duration.ofMillis(200)).size();
                }
                c.commitSync();
            }
            HttpClient client = HttpClient.newHttpClient();
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + http.port() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            return response.body();
        }
    }

    @Test
    void promtoolFindsNothingToCriticiseInALiveBrokersMetrics() throws Exception {
        Path promtool = promtool();
        assumeTrue(promtool != null, "promtool is not installed (apt-get install prometheus; scripts/test.sh does)");
        String text = liveMetrics(dir);
        assertThat(text).contains("sluice_group_lag_events{group=\"billing\"").contains("sluice_binary_requests_total ")
                .contains("sluice_publish_to_journal_seconds_bucket");
        Path file = dir.resolve("metrics.txt");
        Files.writeString(file, text, StandardCharsets.UTF_8);
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target", "metrics-sample.txt"), text, StandardCharsets.UTF_8); // kept as a test artifact

        Process p = new ProcessBuilder(promtool.toString(), "check", "metrics")
                .redirectInput(file.toFile()).redirectErrorStream(true).start();
        String findings = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(findings).as("promtool check metrics findings").isBlank();
        assertThat(p.exitValue()).isZero();
    }


    @Test
    void promtoolDoesReportTheMistakesTheOldHandWrittenTextMade() throws Exception {
        Path promtool = promtool();
        assumeTrue(promtool != null, "promtool is not installed (apt-get install prometheus; scripts/test.sh does)");
        Path file = dir.resolve("old.txt");
        Files.writeString(file, "# HELP sluice_binary_requests_total Reported by another Sluice component.\n"
                + "# TYPE sluice_binary_requests_total gauge\nsluice_binary_requests_total 3\n", StandardCharsets.UTF_8);
        Process p = new ProcessBuilder(promtool.toString(), "check", "metrics")
                .redirectInput(file.toFile()).redirectErrorStream(true).start();
        String findings = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(findings).contains("sluice_binary_requests_total");
    }
}
