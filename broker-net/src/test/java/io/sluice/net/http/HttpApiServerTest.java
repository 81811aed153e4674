package io.sluice.net.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.TopicConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import static io.sluice.net.http.HttpTestSupport.client;
import static io.sluice.net.http.HttpTestSupport.endOffsetSum;
import static io.sluice.net.http.HttpTestSupport.get;
import static io.sluice.net.http.HttpTestSupport.json;
import static io.sluice.net.http.HttpTestSupport.post;
import static io.sluice.net.http.HttpTestSupport.readAll;
import static org.assertj.core.api.Assertions.assertThat;

/** The HTTP API over real sockets against a real embedded broker. */
class HttpApiServerTest {
    @TempDir
    static Path dataDir;
    static Broker broker;
    static HttpApiServer server;
    static io.sluice.net.metrics.MetricsRegistry gauges = new io.sluice.net.metrics.MetricsRegistry();
    static HttpClient client = client();

    @BeforeAll
    static void start() {
        broker = Broker.open(BrokerConfig.builder(dataDir).build());
        gauges.gauge("sluice_binary_connections", "Open binary connections.", () -> 7);
        server = new HttpApiServer(HttpApiConfig.builder().port(0).build(), broker, gauges);
    }

    @AfterAll
    static void stop() {
        server.close();
        broker.close();
    }

    @Test
    void producedEventsAreAcknowledgedWithTheirOffsetsAndStoredByteForByte() {
        broker.createTopic(TopicConfig.of("orders", 1));
        String body = "{\"id\":1,\"item\":\"tea\"}\n{\"id\":2,\"item\":\"caf\u00e9\"}\n\n[3]\n";

        HttpResponse<String> response = post(client, server, "/v1/topics/orders/events", body, "Content-Type", "application/x-ndjson");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode answer = json(response);
        assertThat(answer.get("count").asInt()).isEqualTo(3);
        for (int i = 0; i < 3; i++) {
            assertThat(answer.get("offsets").get(i).get("partition").asInt()).isZero();
            assertThat(answer.get("offsets").get(i).get("offset").asLong()).isEqualTo(i);
        }
        List<ConsumerRecord> stored = readAll(broker, "orders", 0);
        assertThat(stored).extracting(ConsumerRecord::valueAsString)
                .containsExactly("{\"id\":1,\"item\":\"tea\"}", "{\"id\":2,\"item\":\"caf\u00e9\"}", "[3]");
        assertThat(stored).extracting(ConsumerRecord::key).containsOnlyNulls();
    }

    @Test
    void theAcceptedAnswerIsCompactJsonWithItsLength() {
        broker.createTopic(TopicConfig.of("compact", 1));

        HttpResponse<String> journal = post(client, server, "/v1/topics/compact/events", "{\"a\":1}\n[2]\n3\n");
        HttpResponse<String> memory = post(client, server, "/v1/topics/compact/events?acks=memory", "{\"a\":1}");

        assertThat(journal.body()).isEqualTo("{\"count\":3,\"offsets\":[{\"partition\":0,\"offset\":0},"
                + "{\"partition\":0,\"offset\":1},{\"partition\":0,\"offset\":2}]}\n");
        assertThat(memory.body()).isEqualTo("{\"count\":1,\"offsets\":[{\"partition\":0,\"offset\":-1}]}\n");
        for (HttpResponse<String> r : List.of(journal, memory)) {
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
            assertThat(r.headers().firstValue("content-length")).hasValue(Integer.toString(r.body().length()));
        }
    }

    @Test
    void everyDurabilityLevelCanBeChosenPerRequest() {
        broker.createTopic(TopicConfig.of("acks", 1));
        JsonNode memory = json(post(client, server, "/v1/topics/acks/events?acks=memory", "{\"a\":1}\n"));
        assertThat(memory.get("offsets").get(0).get("offset").asLong()).as("MEMORY acks report no offset").isEqualTo(-1);
        JsonNode journal = json(post(client, server, "/v1/topics/acks/events?acks=journal", "{\"a\":2}\n"));
        assertThat(journal.get("offsets").get(0).get("offset").asLong()).isEqualTo(1);
        JsonNode sync = json(post(client, server, "/v1/topics/acks/events?acks=sync", "{\"a\":3}\n"));
        assertThat(sync.get("offsets").get(0).get("offset").asLong()).isEqualTo(2);
        assertThat(readAll(broker, "acks", 0)).extracting(ConsumerRecord::valueAsString)
                .containsExactly("{\"a\":1}", "{\"a\":2}", "{\"a\":3}");

        HttpResponse<String> bad = post(client, server, "/v1/topics/acks/events?acks=maybe", "{}\n");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(json(bad).get("message").asText()).contains("acks must be one of");
    }

    @Test
    void eventsWithTheSameKeyFieldLandOnTheSamePartitionWithThatKey() {
        broker.createTopic(TopicConfig.of("users", 4));
        StringBuilder body = new StringBuilder();
        for (int i = 0; i < 40; i++) {
            body.append("{\"user\":\"u").append(i % 5).append("\",\"n\":").append(i).append("}\n");
        }
        HttpResponse<String> response = post(client, server, "/v1/topics/users/events?key=user", body.toString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);

        Map<String, Integer> partitionOfUser = new HashMap<>();
        JsonNode offsets = json(response).get("offsets");
        for (int i = 0; i < 40; i++) {
            int partition = offsets.get(i).get("partition").asInt();
            Integer previous = partitionOfUser.putIfAbsent("u" + (i % 5), partition);
            assertThat(previous == null || previous == partition).as("user u%d stays on one partition", i % 5).isTrue();
        }
        int total = 0;
        for (int p = 0; p < 4; p++) {
            for (ConsumerRecord r : readAll(broker, "users", p)) {
                assertThat(r.valueAsString()).contains("\"user\":\"" + r.keyAsString() + "\"");
                assertThat(partitionOfUser.get(r.keyAsString())).isEqualTo(p);
                total++;
            }
        }
        assertThat(total).isEqualTo(40);
    }

    @Test
    void aBodyWithOneBadLineIsRejectedNamingTheLineAndNothingOfItIsWritten() {
        broker.createTopic(TopicConfig.of("atomic", 2));
        String body = "{\"ok\":1}\n{\"ok\":2}\n{\"broken\":\n{\"ok\":4}\n";

        HttpResponse<String> response = post(client, server, "/v1/topics/atomic/events", body);

        assertThat(response.statusCode()).isEqualTo(400);
        JsonNode error = json(response);
        assertThat(error.get("code").asText()).isEqualTo("INVALID_REQUEST");
        assertThat(error.get("line").asInt()).isEqualTo(3);
        assertThat(error.get("message").asText()).startsWith("line 3: invalid JSON");
        assertThat(endOffsetSum(broker, "atomic")).isZero();
    }

    @Test
    void anEventLargerThanTheBrokersMaxEventSizeIsRejectedBeforeAnythingIsWritten() {
        broker.createTopic(TopicConfig.of("big", 1));
        String huge = "\"" + "x".repeat(BrokerConfig.DEFAULT_MAX_EVENT_SIZE) + "\"";
        HttpResponse<String> response = post(client, server, "/v1/topics/big/events", "{\"small\":1}\n" + huge.substring(0, 1000) + "\"\n");
        assertThat(response.statusCode()).as("a line below both limits").isEqualTo(200);

        HttpResponse<String> tooBig = post(client, server, "/v1/topics/big/events", "{\"small\":2}\n" + huge + "\n");
        assertThat(tooBig.statusCode()).isEqualTo(400);
        assertThat(json(tooBig).get("line").asInt()).isEqualTo(2);
        assertThat(json(tooBig).get("message").asText()).contains("http.max.line.bytes");
        assertThat(endOffsetSum(broker, "big")).isEqualTo(2);
    }

    @Test
    void gzipBodiesAreInflatedAndUnsupportedEncodingsRefused() throws Exception {
        broker.createTopic(TopicConfig.of("zipped", 1));
        java.io.ByteArrayOutputStream compressed = new java.io.ByteArrayOutputStream();
        try (java.util.zip.GZIPOutputStream gzip = new java.util.zip.GZIPOutputStream(compressed)) {
            gzip.write("{\"z\":1}\n{\"z\":2}\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        HttpResponse<String> response = post(client, server, "/v1/topics/zipped/events", compressed.toByteArray(), "Content-Encoding", "gzip");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(readAll(broker, "zipped", 0)).extracting(ConsumerRecord::valueAsString).containsExactly("{\"z\":1}", "{\"z\":2}");

        HttpResponse<String> unsupported = post(client, server, "/v1/topics/zipped/events", "{}\n", "Content-Encoding", "x-unknown");
        assertThat(unsupported.statusCode()).isEqualTo(415);
        assertThat(endOffsetSum(broker, "zipped")).isEqualTo(2);
    }

    @Test
    void producingToAnUnknownTopicIs404() {
        HttpResponse<String> response = post(client, server, "/v1/topics/nope/events", "{}\n");
        assertThat(response.statusCode()).isEqualTo(404);
        assertThat(json(response).get("code").asText()).isEqualTo("UNKNOWN_TOPIC");
        assertThat(json(response).get("message").asText()).contains("nope");
    }

    @Test
    void unknownQueryParametersAreRejectedRatherThanIgnored() {
        broker.createTopicIfAbsent(TopicConfig.of("params", 1));
        HttpResponse<String> response = post(client, server, "/v1/topics/params/events?ack=sync", "{}\n");
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(json(response).get("message").asText()).contains("'ack'");
    }

    @Test
    void topicsCanBeCreatedListedAndDescribed() {
        HttpResponse<String> created = post(client, server, "/v1/topics", "{\"name\":\"made-by-http\",\"partitions\":3}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        assertThat(json(created).get("partitionCount").asInt()).isEqualTo(3);
        assertThat(broker.partitionsOf("made-by-http")).hasSize(3);

        assertThat(post(client, server, "/v1/topics", "{\"name\":\"made-by-http\",\"partitions\":3}").statusCode()).isEqualTo(409);
        HttpResponse<String> invalid = post(client, server, "/v1/topics", "{\"name\":\"bad\",\"partitions\":0}");
        assertThat(invalid.statusCode()).isEqualTo(400);
        assertThat(json(invalid).get("message").asText()).contains("partitions");
        assertThat(post(client, server, "/v1/topics", "{\"name\":\"x\",\"partitons\":1}").statusCode()).isEqualTo(400);
        assertThat(post(client, server, "/v1/topics", "not json").statusCode()).isEqualTo(400);

        post(client, server, "/v1/topics/made-by-http/events", "1\n2\n3\n4\n5\n6\n");
        JsonNode described = json(get(client, server, "/v1/topics/made-by-http"));
        assertThat(described.get("name").asText()).isEqualTo("made-by-http");
        long endOffsets = 0;
        for (JsonNode p : described.get("partitions")) {
            assertThat(p.get("startOffset").asLong()).isZero();
            endOffsets += p.get("endOffset").asLong();
        }
        assertThat(endOffsets).isEqualTo(6);

        JsonNode list = json(get(client, server, "/v1/topics"));
        assertThat(list.get("topics").findValuesAsText("name")).contains("made-by-http");
        assertThat(get(client, server, "/v1/topics/absent").statusCode()).isEqualTo(404);
    }

    @Test
    void healthAnswersOk() {
        HttpResponse<String> health = get(client, server, "/health");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(json(health).get("status").asText()).isEqualTo("ok");
    }

    @Test
    void wrongMethodsAndUnknownPathsAreRefusedWithReasons() {
        HttpResponse<String> wrongMethod = post(client, server, "/health", "x");
        assertThat(wrongMethod.statusCode()).isEqualTo(405);
        assertThat(wrongMethod.headers().firstValue("allow")).hasValue("GET");
        assertThat(get(client, server, "/v1/topics/t/events").statusCode()).isEqualTo(405);
        assertThat(get(client, server, "/v2/anything").statusCode()).isEqualTo(404);
    }

    @Test
    void metricsAreExposedInThePrometheusTextFormat() {
        broker.createTopic(TopicConfig.of("metered", 2));
        post(client, server, "/v1/topics/metered/events", "1\n2\n3\n");

        HttpResponse<String> response = get(client, server, "/metrics");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/plain; version=0.0.4"));
        String text = response.body();
        assertThat(text).contains("sluice_published_events_total{partition=\"0\",topic=\"metered\"}")
                .contains("# TYPE sluice_journaled_events_total counter")
                .contains("sluice_journal_lag_events{partition=\"1\",topic=\"metered\"}")
                .contains("sluice_ring_occupancy{").contains("sluice_ring_capacity{")
                .contains("sluice_partition_end_offset{").contains("sluice_back_pressured_total{")
                .contains("# TYPE sluice_publish_to_journal_seconds histogram")
                .contains("sluice_publish_to_journal_seconds_bucket{le=\"0.001\"}")
                .contains("sluice_publish_to_journal_seconds_count")
                .contains("sluice_http_requests_total{code=\"200\",route=\"produce\"}")
                .contains("sluice_http_connections ")
                .contains("sluice_binary_connections 7.0");
        long published = 0;
        Pattern sample = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*(\\{([a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\\\n]|\\\\.)*\",?)*\\})? (-?[0-9.eE+-]+|NaN|[+-]Inf)");
        for (String line : text.split("\n")) {
            if (line.startsWith("#")) {
                assertThat(line).matches("# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+");
                continue;
            }
            assertThat(line).matches(sample);
            if (line.startsWith("sluice_published_events_total{") && line.contains("topic=\"metered\"")) {
                published += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        assertThat(published).isEqualTo(3);
    }
}
