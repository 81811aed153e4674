package io.sluice.cli;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.testkit.ChildJvm;
import io.sluice.testkit.Await;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.ServicesExtension;
import io.sluice.net.client.RemoteProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The whole path as a user runs it: {@code sluice broker --config FILE} with an {@code ingest.<name>.*} section,
 * events produced over the network, rows counted in ClickHouse — every event exactly once.
 */
@ExtendWith(ServicesExtension.class)
class BrokerIngestTest {
    private static final Pattern LISTENING = Pattern.compile("binary protocol on [^:]+:(\\d+)");

    @TempDir
    Path dir;

    @Test
    void aBrokerStartedWithAnIngestSectionLandsEveryNetworkEventInClickHouseOnce(ClickHouseServer clickHouse) throws Exception {
        String db = clickHouse.createDatabase("broker_ingest");
        String table = db + ".events";
        clickHouse.execute("CREATE TABLE " + table + " (id UInt64, name String, value Int64, _sluice_partition UInt32,"
                + " _sluice_offset UInt64) ENGINE = MergeTree ORDER BY (_sluice_partition, _sluice_offset)");
        Path data = dir.resolve("data");
        try (Broker setup = Broker.open(BrokerConfig.builder(data).build())) {
            setup.createTopic(TopicConfig.of("clicks", 2));
        }
        Path config = dir.resolve("sluice.properties");
        Files.writeString(config, String.join("\n",
                "data.dir=" + data,
                "port=0",
                "http.port=0",
                "ingest.clicks.topic=clicks",
                "ingest.clicks.clickhouse.url=" + clickHouse.url(),
                "ingest.clicks.table=" + table,
                "ingest.clicks.strategy=journal",
                "ingest.clicks.batch.rows=500",
                "ingest.clicks.linger.ms=20",
                ""), StandardCharsets.UTF_8);

        try (ChildJvm broker = ChildJvm.start(SluiceCli.class, "broker", "--config", config.toString())) {
            String bootstrap = null;
            String line;
            while (bootstrap == null && (line = broker.readLine()) != null) {
                Matcher m = LISTENING.matcher(line);
                if (m.find()) {
                    bootstrap = "127.0.0.1:" + m.group(1);
                }
            }
            assertThat(bootstrap).as("the broker announced its port").isNotNull();

            int n = 3_000;
            try (RemoteProducer producer = new RemoteProducer(bootstrap, ProducerConfig.DEFAULT)) {
                for (int i = 0; i < n; i++) {
                    String json = "{\"id\":" + i + ",\"name\":\"n" + i + "\",\"value\":" + (3 * i) + "}";
                    producer.send(ProducerRecord.of("clicks", null, json));
                }
                producer.flush();
            }
            Await.until(n + " rows in " + table, Duration.ofSeconds(90),
                    () -> clickHouse.queryLong("SELECT count() FROM " + table) >= n);
            long sum = (long) n * (n - 1) / 2;
            assertThat(clickHouse.query("SELECT count(), uniqExact(id), sum(id), sum(value) FROM " + table
                    + " FORMAT TabSeparated").strip()).isEqualTo(n + "\t" + n + "\t" + sum + "\t" + (3 * sum));
        }
    }

    private static int freePort() throws java.io.IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static java.net.http.HttpResponse<String> get(String url) {
        try {
            return java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(url))
                    .timeout(Duration.ofSeconds(10)).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Test
    void healthIs503WithTheReasonWhenAPipelineFailedOnItsConfigurationAndMetricsShowEachGuarantee(ClickHouseServer clickHouse)
            throws Exception {
        String db = clickHouse.createDatabase("broker_health");
        String table = db + ".events";
        clickHouse.execute("CREATE TABLE " + table + " (id UInt64, _sluice_partition UInt32, _sluice_offset UInt64)"
                + " ENGINE = MergeTree ORDER BY (_sluice_partition, _sluice_offset)");
        String plain = db + ".plain";
        clickHouse.execute("CREATE TABLE " + plain + " (id UInt64) ENGINE = MergeTree ORDER BY id");
        Path data = dir.resolve("data");
        try (Broker setup = Broker.open(BrokerConfig.builder(data).build())) {
            setup.createTopic(TopicConfig.of("clicks", 1));
        }
        int httpPort = freePort();
        Path config = dir.resolve("sluice.properties");
        Files.writeString(config, String.join("\n",
                "data.dir=" + data,
                "port=0",
                "http.port=" + httpPort,
                "ingest.good.topic=clicks",
                "ingest.good.clickhouse.url=" + clickHouse.url(),
                "ingest.good.table=" + table,
                "ingest.good.strategy=journal",
                "ingest.plain.topic=clicks",
                "ingest.plain.clickhouse.url=" + clickHouse.url(),
                "ingest.plain.table=" + plain,
                "ingest.plain.strategy=journal",
                "ingest.ghost.topic=no-such-topic",
                "ingest.ghost.clickhouse.url=" + clickHouse.url(),
                "ingest.ghost.table=" + table,
                "ingest.ghost.strategy=journal",
                ""), StandardCharsets.UTF_8);
        try (ChildJvm broker = ChildJvm.start(SluiceCli.class, "broker", "--config", config.toString())) {
            String line;
            boolean listening = false;
            while (!listening && (line = broker.readLine()) != null) {
                listening = line.contains("binary protocol on");
            }
            assertThat(listening).as("the broker started").isTrue();
            String base = "http://127.0.0.1:" + httpPort;
            Await.until("/health 503", Duration.ofSeconds(30), () -> get(base + "/health").statusCode() == 503);
            String health = get(base + "/health").body();
            assertThat(health).contains("\"status\":\"failing\"").contains("no-such-topic")
                    .contains("\"ingest.ghost\":{\"healthy\":false");
            String metrics = get(base + "/metrics").body();
            assertThat(metrics)
                    .contains("sluice_ingest_guarantee{pipeline=\"good\",guarantee=\"exactly-once-idempotent-insert\"} 1")
                    .contains("sluice_ingest_guarantee{pipeline=\"plain\",guarantee=\"at-least-once\"} 1")
                    .contains("sluice_ingest_state{pipeline=\"ghost\",state=\"failed\"} 1")
                    .contains("sluice_ingest_state{pipeline=\"good\",state=\"running\"} 1");
        }
    }
}
