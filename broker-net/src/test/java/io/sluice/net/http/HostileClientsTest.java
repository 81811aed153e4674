package io.sluice.net.http;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.TopicConfig;
import io.sluice.net.http.HttpTestSupport.RawConnection;
import io.sluice.net.http.HttpTestSupport.RawResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static io.sluice.net.http.HttpTestSupport.await;
import static io.sluice.net.http.HttpTestSupport.client;
import static io.sluice.net.http.HttpTestSupport.endOffsetSum;
import static io.sluice.net.http.HttpTestSupport.get;
import static io.sluice.net.http.HttpTestSupport.json;
import static io.sluice.net.http.HttpTestSupport.post;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Promise: hostile or broken clients get a clear error or have their own connection closed; nothing of a rejected
 * request is written, memory stays bounded, and every other client keeps being served.
 */
class HostileClientsTest {
    private static final int MAX_BODY = 64 * 1024;
    @TempDir
    static Path dataDir;
    static Broker broker;
    static HttpApiServer server;
    static HttpClient client = client();

    @BeforeAll
    static void start() {
        broker = Broker.open(BrokerConfig.builder(dataDir).maxEventSize(4096).build());
        broker.createTopic(TopicConfig.of("t", 2));
        server = new HttpApiServer(HttpApiConfig.builder().port(0).maxBodyBytes(MAX_BODY).maxLineBytes(8192)
                .maxJsonDepth(32).requestTimeoutMillis(30_000).idleTimeoutMillis(60_000).build(), broker);
    }

    @AfterAll
    static void stop() {
        server.close();
        broker.close();
    }

    @Test
    void aBodyAnnouncedLargerThanTheLimitGets413BeforeItIsReadAndTheConnectionIsClosed() {
        try (RawConnection raw = new RawConnection(server.port())) {
            raw.write("POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n");
            RawResponse response = raw.readResponse();
            assertThat(response.status()).isEqualTo(413);
            assertThat(response.body()).contains("RECORD_TOO_LARGE").contains("http.max.body.bytes");
            assertThat(raw.closedByServer()).isTrue();
        }
        assertThat(endOffsetSum(broker, "t")).isZero();
    }

    @Test
    void aChunkedBodyGrowingPastTheLimitGets413AndTheConnectionIsClosed() {
        try (RawConnection raw = new RawConnection(server.port())) {
            raw.write("POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
            String line = "{\"pad\":\"" + "p".repeat(1000) + "\"}\n";
            String chunk = Integer.toHexString(line.length()) + "\r\n" + line + "\r\n";
            for (int sent = 0; sent <= MAX_BODY; sent += line.length()) {
                raw.write(chunk);
            }
            RawResponse response = raw.readResponse();
            assertThat(response.status()).isEqualTo(413);
            assertThat(raw.closedByServer()).isTrue();
        }
        assertThat(endOffsetSum(broker, "t")).isZero();
    }

    @Test
    void aGzipBombIsStoppedAtTheBodyLimitAndNothingIsWritten() throws Exception {
        java.io.ByteArrayOutputStream compressed = new java.io.ByteArrayOutputStream();
        try (java.util.zip.GZIPOutputStream gzip = new java.util.zip.GZIPOutputStream(compressed)) {
            byte[] blanks = new byte[1 << 20];
            java.util.Arrays.fill(blanks, (byte) ' ');
            for (int i = 0; i < 64; i++) { // 64 MiB of blanks: 1,000 times the body limit once inflated
                gzip.write(blanks);
            }
        }
        byte[] bomb = compressed.toByteArray();
        try (RawConnection raw = new RawConnection(server.port())) {
            raw.write(("POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: "
                    + bomb.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            raw.write(bomb);
            RawResponse response = raw.readResponse();
            assertThat(response.status()).isEqualTo(413);
            assertThat(raw.closedByServer()).isTrue();
        }
        assertThat(endOffsetSum(broker, "t")).isZero();
        assertThat(get(client, server, "/health").statusCode()).isEqualTo(200);
    }

    @Test
    void invalidUtf8IsRejectedNamingTheLineAndNothingIsWritten() {
        byte[] body = {'{', '"', 'a', '"', ':', '1', '}', '\n', '"', (byte) 0xC0, (byte) 0xAF, '"', '\n'};
        HttpResponse<String> response = post(client, server, "/v1/topics/t/events", body);
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(json(response).get("line").asInt()).isEqualTo(2);
        assertThat(json(response).get("message").asText()).contains("invalid UTF-8");
        assertThat(endOffsetSum(broker, "t")).isZero();
    }

    @Test
    void deeplyNestedJsonIsRejectedWithoutExhaustingTheStack() {
        String deep = "[".repeat(4000) + "]".repeat(4000); // within http.max.line.bytes, far past the depth limit
        HttpResponse<String> response = post(client, server, "/v1/topics/t/events", deep + "\n");
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(json(response).get("message").asText()).contains("deeper than 32");
        assertThat(endOffsetSum(broker, "t")).isZero();
    }

    @Test
    void anEventOverTheBrokersMaxEventSizeIsRejectedNamingTheLine() {
        String big = "\"" + "x".repeat(5000) + "\"";
        HttpResponse<String> response = post(client, server, "/v1/topics/t/events", "1\n" + big + "\n");
        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(json(response).get("code").asText()).isEqualTo("RECORD_TOO_LARGE");
        assertThat(json(response).get("line").asInt()).isEqualTo(2);
        assertThat(endOffsetSum(broker, "t")).isZero();
    }

    @Test
    void aSlowDripClientIsCutOffAtTheRequestDeadlineWhileOthersAreServed() throws Exception {
        ScheduledExecutorService dripper = Executors.newSingleThreadScheduledExecutor();
        try (HttpApiServer strict = new HttpApiServer(HttpApiConfig.builder().port(0)
                .requestTimeoutMillis(1000).idleTimeoutMillis(60_000).build(), broker);
             RawConnection slow = new RawConnection(strict.port())) {
            byte[] request = "POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789"
                    .getBytes(StandardCharsets.US_ASCII);
            // one byte every 50 ms: never idle, but the whole request would take 3.5 s, past the 1 s deadline
            int[] next = {0};
            dripper.scheduleWithFixedDelay(() -> { // fixed delay: never a catch-up burst
                if (next[0] < request.length) {
                    try {
                        slow.write(new byte[]{request[next[0]++]});
                    } catch (RuntimeException closed) {
                        next[0] = request.length; // the server hung up: stop dripping
                    }
                }
            }, 0, 50, TimeUnit.MILLISECONDS);

            assertThat(get(client, strict, "/health").statusCode()).as("others are served meanwhile").isEqualTo(200);
            RawResponse response = slow.readResponse();
            assertThat(response.status()).isEqualTo(408);
            assertThat(slow.closedByServer()).isTrue();
            assertThat(get(client, strict, "/health").statusCode()).isEqualTo(200);
        } finally {
            dripper.shutdownNow();
        }
        assertThat(endOffsetSum(broker, "t")).isZero();
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() {
        broker.createTopicIfAbsent(TopicConfig.of("piped", 1));
        try (RawConnection raw = new RawConnection(server.port())) {
            String produce = "POST /v1/topics/piped/events HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\n1\n2\n3\n";
            raw.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n" + produce + "GET /v1/topics/piped HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n" + produce);
            List<Integer> statuses = new ArrayList<>();
            List<String> bodies = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                RawResponse r = raw.readResponse();
                statuses.add(r.status());
                bodies.add(r.body());
            }
            assertThat(statuses).containsExactly(200, 200, 200, 404, 200);
            assertThat(bodies.get(0)).contains("\"status\":\"ok\"");
            assertThat(bodies.get(1)).contains("\"count\":3");
            assertThat(bodies.get(2)).contains("\"endOffset\":3");
            assertThat(bodies.get(4)).contains("\"offset\":5");
        }
    }

    @Test
    void garbageInsteadOfHttpGetsA400AndTheConnectionIsClosed() {
        try (RawConnection raw = new RawConnection(server.port())) {
            raw.write(new byte[]{0x16, 0x03, 0x01, 0x00, (byte) 0xff, 'x', '\r', '\n', '\r', '\n'});
            RawResponse response = raw.readResponse();
            assertThat(response.status()).isEqualTo(400);
            assertThat(raw.closedByServer()).isTrue();
        }
        try (RawConnection raw = new RawConnection(server.port())) {
            raw.write("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + "h".repeat(20_000) + "\r\n\r\n");
            assertThat(raw.readResponse().status()).isEqualTo(431);
        }
        try (RawConnection raw = new RawConnection(server.port())) {
            raw.write("POST /v1/topics/t/events?acks=%zz HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n{}\n");
            RawResponse badEscape = raw.readResponse();
            assertThat(badEscape.status()).isEqualTo(400);
            assertThat(badEscape.body()).contains("malformed request URI");
        }
        assertThat(get(client, server, "/health").statusCode()).isEqualTo(200);
    }

    @Test
    void negativeOrOverflowingContentLengthsAreRefused() {
        for (String length : new String[]{"-1", "99999999999999999999", "12abc"}) {
            try (RawConnection raw = new RawConnection(server.port())) {
                raw.write("POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + "\r\n\r\n{}\n");
                RawResponse response = raw.readResponse();
                assertThat(response.status()).as("Content-Length: %s", length).isIn(400, 413);
                assertThat(raw.closedByServer()).isTrue();
            }
        }
        assertThat(endOffsetSum(broker, "t")).isZero();
    }

    @Test
    void aThousandConnectionsDroppedAtOnceAreAllReleasedAndTheServerKeepsServing() {
        // its own listener with generous time bounds, so that only the drop ends these connections
        try (HttpApiServer roomy = new HttpApiServer(HttpApiConfig.builder().port(0)
                .requestTimeoutMillis(120_000).idleTimeoutMillis(120_000).build(), broker)) {
            List<RawConnection> connections = new ArrayList<>();
            try {
                for (int i = 0; i < 1000; i++) {
                    RawConnection c = new RawConnection(roomy.port());
                    connections.add(c);
                    c.write("POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"half\":"); // never finished
                }
                await("1000 open connections", () -> roomy.connectionCount() == 1000);
            } finally {
                connections.forEach(RawConnection::close);
            }
            await("every dropped connection to be released", () -> roomy.connectionCount() == 0);
            assertThat(get(client, roomy, "/health").statusCode()).isEqualTo(200);
        }
        assertThat(endOffsetSum(broker, "t")).isZero();
    }

    @Test
    void aClientVanishingMidBodyWritesNothingAndLeavesNoConnectionBehind() {
        int before = server.connectionCount();
        try (RawConnection raw = new RawConnection(server.port())) {
            raw.write("POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"partial\":");
        }
        await("the vanished connection to be released", () -> server.connectionCount() <= before);
        assertThat(endOffsetSum(broker, "t")).isZero();
        assertThat(get(client, server, "/health").statusCode()).isEqualTo(200);
    }

    @Test
    void anIdleConnectionIsClosed() {
        try (HttpApiServer quick = new HttpApiServer(HttpApiConfig.builder().port(0).idleTimeoutMillis(200).build(), broker);
             RawConnection idle = new RawConnection(quick.port())) {
            assertThat(idle.closedByServer()).as("closed after 200 ms without a request").isTrue();
            await("the closed connection to be released", () -> quick.connectionCount() == 0);
        }
    }

    @Test
    void connectionsBeyondTheLimitAreRefusedWith503AndTheOthersKeepWorking() {
        try (HttpApiServer small = new HttpApiServer(HttpApiConfig.builder().port(0).maxConnections(2).build(), broker);
             RawConnection first = new RawConnection(small.port());
             RawConnection second = new RawConnection(small.port())) {
            await("two connections", () -> small.connectionCount() == 2);
            try (RawConnection third = new RawConnection(small.port())) {
                RawResponse refused = third.readResponse();
                assertThat(refused.status()).isEqualTo(503);
                assertThat(refused.headers()).containsEntry("retry-after", "1");
                assertThat(third.closedByServer()).isTrue();
            }
            first.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
            assertThat(first.readResponse().status()).isEqualTo(200);
            second.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
            assertThat(second.readResponse().status()).isEqualTo(200);
        }
    }
}
