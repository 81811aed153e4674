package io.sluice.net.http;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.TopicConfig;
import io.sluice.net.security.TokenAuthenticator;
import io.sluice.net.testing.FaultInjectingBroker;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPOutputStream;

import static io.sluice.net.http.HttpTestSupport.RawConnection;
import static io.sluice.net.http.HttpTestSupport.RawResponse;
import static io.sluice.net.http.HttpTestSupport.TIMEOUT;
import static io.sluice.net.http.HttpTestSupport.client;
import static io.sluice.net.http.HttpTestSupport.get;
import static io.sluice.net.http.HttpTestSupport.uri;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Promises (issue 11): with a token configured, the token is checked on a request's headers before its body is read,
 * inflated or aggregated; clients that have not authenticated are bounded in number; topic creation never runs on an
 * I/O event loop; an unexpected failure answers {@code 500} and the connection keeps serving.
 */
class HttpUnauthenticatedTest {
    private static final String TOKEN = "tok-1b7e-4c2d-9a51-unauthenticated-test";
    private static final String BEARER = "Bearer " + TOKEN;
    @TempDir
    static Path dir;
    static Broker broker;

    @BeforeAll
    static void open() {
        broker = Broker.open(BrokerConfig.builder(dir.resolve("data")).build());
        broker.createTopic(TopicConfig.of("t", 1));
    }

    @AfterAll
    static void close() {
        broker.close();
    }

    private static HttpApiConfig.Builder withToken() {
        return HttpApiConfig.builder().port(0).ioThreads(1).auth(TokenAuthenticator.of(TOKEN));
    }

    @Test
    void withoutTheTokenA401ComesBackOnTheHeadersAloneAndNoBodyIsRead() throws Exception {
        try (HttpApiServer server = new HttpApiServer(withToken().build(), broker)) {
            // a body of 15 MiB announced, none of it sent: the answer cannot wait for the body
            try (RawConnection c = new RawConnection(server.port())) {
                c.write("POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Length: " + (15 << 20) + "\r\n\r\n");
                RawResponse r = c.readResponse();
                assertThat(r.status()).isEqualTo(401);
                assertThat(r.headers()).containsEntry("connection", "close").containsKey("www-authenticate");
                assertThat(c.closedByServer()).isTrue();
            }
            // a gzip bomb (15 MiB of zeros), its first half sent: refused, never inflated
            byte[] bomb = gzipOfZeros(15 << 20);
            try (RawConnection c = new RawConnection(server.port())) {
                c.write("POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: "
                        + bomb.length + "\r\n\r\n");
                c.write(java.util.Arrays.copyOf(bomb, bomb.length / 2));
                assertThat(c.readResponse().status()).isEqualTo(401);
                assertThat(c.closedByServer()).isTrue();
            }
            // chunked, with a wrong token
            try (RawConnection c = new RawConnection(server.port())) {
                c.write("POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer not-the-token-at-all\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n100000\r\n");
                assertThat(c.readResponse().status()).isEqualTo(401);
                assertThat(c.closedByServer()).isTrue();
            }
            assertThat(HttpTestSupport.endOffsetSum(broker, "t")).as("nothing written").isZero();
            // the same request with the token is served
            try (RawConnection c = new RawConnection(server.port())) {
                c.write("POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nAuthorization: " + BEARER
                        + "\r\nContent-Length: 8\r\n\r\n{\"a\":1}\n");
                assertThat(c.readResponse().status()).isEqualTo(200);
            }
        }
    }

    @Test
    void aPipelinedRequestWithoutTheTokenIsAnsweredInItsTurnThenTheConnectionCloses() {
        try (HttpApiServer server = new HttpApiServer(withToken().build(), broker);
             RawConnection c = new RawConnection(server.port())) {
            c.write("GET /v1/topics HTTP/1.1\r\nHost: x\r\nAuthorization: " + BEARER + "\r\n\r\n"
                    + "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "GET /v1/topics HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "GET /v1/topics HTTP/1.1\r\nHost: x\r\nAuthorization: " + BEARER + "\r\n\r\n");
            assertThat(c.readResponse().status()).isEqualTo(200);
            assertThat(c.readResponse().status()).isEqualTo(200);
            assertThat(c.readResponse().status()).isEqualTo(401);
            assertThat(c.closedByServer()).isTrue();
        }
    }

    @Test
    void connectionsThatHaveNotAuthenticatedAreBoundedAndAValidTokenFreesTheSlot() {
        try (HttpApiServer server = new HttpApiServer(withToken().maxUnauthenticatedConnections(2).build(), broker);
             RawConnection first = new RawConnection(server.port());
             RawConnection second = new RawConnection(server.port())) {
            HttpTestSupport.await("two connections counted", () -> server.connectionCount() == 2);
            try (RawConnection third = new RawConnection(server.port())) {
                RawResponse refused = third.readResponse();
                assertThat(refused.status()).isEqualTo(503);
                assertThat(refused.body()).contains("http.max.unauthenticated.connections");
                assertThat(third.closedByServer()).isTrue();
            }
            first.write("GET /v1/topics HTTP/1.1\r\nHost: x\r\nAuthorization: " + BEARER + "\r\n\r\n");
            assertThat(first.readResponse().status()).isEqualTo(200);
            try (RawConnection fourth = new RawConnection(server.port())) {
                fourth.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
                assertThat(fourth.readResponse().status()).isEqualTo(200);
            }
            // the server frees the fourth's unauthenticated slot when it sees the close: until then the next
            // connection (the HTTP client's, below) would be the third unauthenticated one and be refused
            HttpTestSupport.await("the fourth connection's slot freed", () -> server.connectionCount() == 2);
            String metrics = get(client(), server, "/metrics", "Authorization", BEARER).body();
            assertThat(metrics).contains("sluice_http_unauthenticated_rejected_total 1");
        }
    }

    @Test
    void topicCreationRunsOffTheEventLoopSoASlowCreationHoldsUpNoOtherConnection() throws Exception {
        FaultInjectingBroker slow = new FaultInjectingBroker(broker);
        slow.createTopicGate = new CountDownLatch(1);
        HttpClient client = client();
        try (HttpApiServer server = new HttpApiServer(withToken().build(), slow)) { // one I/O thread
            CompletableFuture<HttpResponse<String>> creating = client.sendAsync(HttpRequest.newBuilder(uri(server, "/v1/topics"))
                    .timeout(TIMEOUT).header("Authorization", BEARER)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"slow\",\"partitions\":1}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            HttpTestSupport.await("creation started", () -> slow.createTopicThread != null);
            // the creation is blocked; the only event loop still answers another connection
            assertThat(get(client, server, "/v1/topics/t", "Authorization", BEARER).statusCode()).isEqualTo(200);
            assertThat(creating).isNotDone();
            slow.createTopicGate.countDown();
            HttpResponse<String> created = creating.get(30, TimeUnit.SECONDS);
            assertThat(created.statusCode()).isEqualTo(201);
            assertThat(slow.createTopicThread).isEqualTo("sluice-http-admin");
            assertThat(broker.listTopics()).contains("slow");
        }
    }

    @Test
    void anUnexpectedFailureIsAnswered500AndTheConnectionKeepsServing() {
        FaultInjectingBroker faulty = new FaultInjectingBroker(broker);
        faulty.createTopicFault = () -> new IllegalStateException("injected failure");
        try (HttpApiServer server = new HttpApiServer(withToken().build(), faulty);
             RawConnection c = new RawConnection(server.port())) {
            String body = "{\"name\":\"never\",\"partitions\":1}";
            c.write("POST /v1/topics HTTP/1.1\r\nHost: x\r\nAuthorization: " + BEARER + "\r\nContent-Length: "
                    + body.length() + "\r\n\r\n" + body);
            RawResponse failed = c.readResponse();
            assertThat(failed.status()).isEqualTo(500);
            assertThat(failed.body()).contains("injected failure");
            c.write("GET /v1/topics/t HTTP/1.1\r\nHost: x\r\nAuthorization: " + BEARER + "\r\n\r\n");
            assertThat(c.readResponse().status()).isEqualTo(200);
        }
    }

    static byte[] gzipOfZeros(int size) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(bytes)) {
            byte[] zeros = new byte[1 << 20];
            for (int written = 0; written < size; written += zeros.length) {
                gz.write(zeros, 0, Math.min(zeros.length, size - written));
            }
        }
        return bytes.toByteArray();
    }
}
