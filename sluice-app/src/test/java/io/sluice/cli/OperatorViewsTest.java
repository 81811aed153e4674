package io.sluice.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.TopicConfig;
import io.sluice.testkit.Await;
import io.sluice.testkit.ChildJvm;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What an operator looks at, against a real {@code sluice broker} process with a token, an ingest pipeline into a
 * real ClickHouse and a consumer group that lags: {@code /metrics} passes {@code promtool check metrics} and has
 * every series the Grafana dashboard queries; {@code /ui} in headless Chromium shows the group's lag, the pipeline's
 * state and lag, and the topic's offsets (screenshot kept as {@code target/ui-screenshot.png}).
 */
@ExtendWith(ServicesExtension.class)
class OperatorViewsTest {
    private static final String TOKEN = "operator-views-test-token-0123456789";
    private static final Pattern METRIC = Pattern.compile("\\bsluice_[a-z0-9_]+");
    static final Path REPO = Path.of("..").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static HttpResponse<String> http(String method, String url, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + TOKEN)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        try {
            return HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static Path executable(String... candidates) {
        for (String c : candidates) {
            if (Files.isExecutable(Path.of(c))) {
                return Path.of(c);
            }
        }
        return null;
    }

    /** Runs a tool to completion; returns its stdout (its stderr goes to target/tools-stderr.log). */
    static String run(List<String> command) throws Exception {
        Process p = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.appendTo(Path.of("target", "tools-stderr.log").toFile())).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as(String.join(" ", command)).isTrue();
        assertThat(p.exitValue()).as(command.get(0) + " said:\n" + out).isZero();
        return out;
    }

    @Test
    void metricsDashboardAndStatusPageAnswerHowFarBehindAGroupAndAPipelineAre(ClickHouseServer clickHouse) throws Exception {
        String table = clickHouse.createDatabase("operator_views") + ".clicks";
        clickHouse.execute("CREATE TABLE " + table + " (id UInt64, _sluice_partition UInt32, _sluice_offset UInt64)"
                + " ENGINE = MergeTree ORDER BY (_sluice_partition, _sluice_offset)");
        Path data = dir.resolve("data");
        try (Broker setup = Broker.open(BrokerConfig.builder(data).build())) {
            setup.createTopic(TopicConfig.of("clicks", 2));
        }
        Files.writeString(dir.resolve("token"), TOKEN);
        int httpPort = freePort();
        Path config = dir.resolve("sluice.properties");
        Files.writeString(config, String.join("\n", "data.dir=" + data, "port=0", "http.port=" + httpPort,
                "auth.token.file=" + dir.resolve("token"),
                "ingest.clicks.topic=clicks", "ingest.clicks.clickhouse.url=" + clickHouse.url(),
                "ingest.clicks.table=" + table, "ingest.clicks.strategy=offset-range", "ingest.clicks.batch.rows=200",
                "ingest.clicks.linger.ms=20", ""), StandardCharsets.UTF_8);

        try (ChildJvm broker = ChildJvm.start(SluiceCli.class, "broker", "--config", config.toString())) {
            String line;
            while ((line = broker.readLine()) != null && !line.contains("binary protocol on")) {
                // wait until it serves
            }
            assertThat(line).as("the broker started").isNotNull();
            String base = "http://127.0.0.1:" + httpPort;

            int n = 1_000;
            StringBuilder ndjson = new StringBuilder();
            for (int i = 0; i < n; i++) {
                ndjson.append("{\"id\":").append(i).append("}\n");
            }
            assertThat(http("POST", base + "/v1/topics/clicks/events", ndjson.toString()).statusCode()).isEqualTo(200);
            Await.until(n + " rows in ClickHouse", Duration.ofSeconds(90), () -> clickHouse.queryLong("SELECT count() FROM " + table) >= n);
            // a group that has read 100 events of each partition: it lags by the rest
            HttpResponse<String> reset = http("POST", base + "/v1/groups/billing/reset-offsets",
                    "{\"topic\":\"clicks\",\"reset\":\"to-offset\",\"value\":100,\"execute\":true}");
            assertThat(reset.statusCode()).as(reset.body()).isEqualTo(200);

            // ---- /metrics: promtool-clean, with group lag and ingest lag
            Await.until("the pipeline committed everything", Duration.ofSeconds(60), () -> {
                String m = http("GET", base + "/metrics", null).body();
                return m.contains("sluice_ingest_behind_events{pipeline=\"clicks\",strategy=\"offset-range\",table=\"" + table + "\",topic=\"clicks\"} 0.0");
            });
            String metrics = http("GET", base + "/metrics", null).body();
            assertThat(metrics).contains("sluice_ingest_up{pipeline=\"clicks\"").contains("sluice_ingest_rows_total{pipeline=\"clicks\"} 1000.0")
                    .contains("sluice_group_lag_events{group=\"billing\",partition=\"0\",topic=\"clicks\"}");
            Files.createDirectories(Path.of("target"));
            Files.writeString(Path.of("target", "operator-metrics.txt"), metrics);
            Path promtool = executable("/usr/bin/promtool", "/usr/local/bin/promtool");
            if (promtool != null) {
                Process p = new ProcessBuilder(promtool.toString(), "check", "metrics")
                        .redirectInput(Path.of("target", "operator-metrics.txt").toFile()).redirectErrorStream(true).start();
                String findings = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
                assertThat(findings).as("promtool check metrics").isBlank();
                run(List.of(promtool.toString(), "check", "config", "--syntax-only",
                        REPO.resolve("docker/prometheus/prometheus.yml").toString()));
            }

            // ---- the Grafana dashboard queries only series the broker has
            JsonNode dashboard = new ObjectMapper().readTree(REPO.resolve("docker/grafana/dashboards/sluice.json").toFile());
            Set<String> queried = new TreeSet<>();
            for (JsonNode panel : dashboard.get("panels")) {
                for (JsonNode target : panel.get("targets")) {
                    Matcher m = METRIC.matcher(target.get("expr").asText());
                    while (m.find()) {
                        queried.add(m.group());
                    }
                }
            }
            assertThat(queried).hasSizeGreaterThan(10);
            List<String> missing = new ArrayList<>();
            for (String name : queried) {
                if (!Pattern.compile("(?m)^" + name + "[{ ]").matcher(metrics).find()) {
                    missing.add(name);
                }
            }
            assertThat(missing).as("dashboard metrics missing from /metrics").isEmpty();

            // ---- /ui in headless Chromium
            assertThat(HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(base + "/ui")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode()).as("the page needs the token").isEqualTo(401);
            Path chromium = executable("/usr/bin/chromium", "/usr/bin/chromium-browser");
            assumeTrue(chromium != null, "chromium is not installed (apt-get install chromium; scripts/test.sh does)");
            List<String> browser = List.of(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--user-data-dir=" + dir.resolve("chromium"), "--window-size=1280,1100",
                    "--virtual-time-budget=6000");
            List<String> dump = new ArrayList<>(browser);
            dump.add("--dump-dom");
            dump.add(base + "/ui?token=" + TOKEN);
            String dom = run(dump);
            Files.writeString(Path.of("target", "ui-dom.html"), dom);
            assertThat(dom).contains("updated ")
                    .containsPattern("<tr data-group=\"billing\"><td class=\"name\">billing</td><td class=\"name\">clicks</td>"
                            + "<td class=\"name\">Empty</td><td>0</td><td>0</td><td>100</td><td>\\d+</td><td class=\"lagging\">\\d+</td></tr>")
                    .contains("<tr data-pipeline=\"clicks\"><td class=\"name\">clicks</td><td class=\"name\">clicks</td>")
                    .contains("<td class=\"name ok\">running</td><td>0</td><td>1000</td>")
                    .containsPattern("<tr data-topic=\"clicks\"><td class=\"name\">clicks</td><td>0</td><td>0</td><td>\\d+</td>")
                    .contains("<span id=\"error\"></span>");
            List<String> shot = new ArrayList<>(browser);
            shot.add("--screenshot=" + Path.of("target", "ui-screenshot.png").toAbsolutePath());
            shot.add(base + "/ui?token=" + TOKEN);
            run(shot);
            assertThat(Path.of("target", "ui-screenshot.png")).isNotEmptyFile();
        }
    }
}
