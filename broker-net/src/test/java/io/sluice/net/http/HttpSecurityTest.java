package io.sluice.net.http;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.Future;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.TopicConfig;
import io.sluice.net.security.TestCertificates;
import io.sluice.net.security.TlsConfig;
import io.sluice.net.security.TokenAuthenticator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import static io.sluice.net.http.HttpTestSupport.TIMEOUT;
import static io.sluice.net.http.HttpTestSupport.client;
import static io.sluice.net.http.HttpTestSupport.get;
import static io.sluice.net.http.HttpTestSupport.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Promises: with a token configured, every endpoint but {@code /health} refuses a missing or wrong token, and the
 * token never shows in logs, metrics or toString; with TLS, only clients trusting the server's CA get in.
 */
class HttpSecurityTest {
    private static final String TOKEN = "tok-5f0c1e9a-8d1b-4a57-b2a4-0f6e3c9d7b21";
    private static final String WRONG = "tok-00000000-0000-0000-0000-000000000000";
    @TempDir
    static Path dir;
    static Broker broker;

    @BeforeAll
    static void open() {
        broker = Broker.open(BrokerConfig.builder(dir.resolve("data")).build());
        broker.createTopic(TopicConfig.of("secured", 1));
    }

    @AfterAll
    static void close() {
        broker.close();
    }

    @Test
    void withATokenEveryEndpointButHealthRefusesMissingOrWrongTokensAndTheTokenIsNeverShown() {
        PrintStream originalErr = System.err;
        ByteArrayOutputStream logs = new ByteArrayOutputStream();
        System.setErr(new PrintStream(logs, true, StandardCharsets.UTF_8));
        HttpClient client = client();
        HttpApiConfig config = HttpApiConfig.builder().port(0).auth(TokenAuthenticator.of(TOKEN)).build();
        try (HttpApiServer server = new HttpApiServer(config, broker)) {
            List<String[]> endpoints = List.of(
                    new String[]{"GET", "/metrics"}, new String[]{"GET", "/v1/topics"}, new String[]{"GET", "/v1/topics/secured"},
                    new String[]{"POST", "/v1/topics"}, new String[]{"POST", "/v1/topics/secured/events"},
                    new String[]{"GET", "/not/an/endpoint"});
            for (String[] e : endpoints) {
                for (String[] credentials : List.of(new String[0], new String[]{"Authorization", "Bearer " + WRONG},
                        new String[]{"Authorization", "Basic " + TOKEN}, new String[]{"Authorization", "Bearer"})) {
                    HttpResponse<String> refused = request(client, server, e[0], e[1], credentials);
                    assertThat(refused.statusCode()).as("%s %s with %s", e[0], e[1], List.of(credentials)).isEqualTo(401);
                    assertThat(refused.headers().firstValue("www-authenticate")).hasValue("Bearer realm=\"sluice\"");
                }
            }
            assertThat(HttpTestSupport.endOffsetSum(broker, "secured")).as("nothing written without the token").isZero();
            assertThat(get(client, server, "/health").statusCode()).as("/health is open").isEqualTo(200);

            String[] bearer = {"Authorization", "Bearer " + TOKEN};
            assertThat(request(client, server, "POST", "/v1/topics/secured/events", bearer).statusCode()).isEqualTo(200);
            assertThat(get(client, server, "/v1/topics", bearer).statusCode()).isEqualTo(200);
            HttpResponse<String> metrics = get(client, server, "/metrics", bearer);
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.body()).contains("sluice_http_auth_failures_total 24").doesNotContain(TOKEN).doesNotContain(WRONG);
            assertThat(config.toString()).doesNotContain(TOKEN);
        } finally {
            System.setErr(originalErr);
        }
        String logged = logs.toString(StandardCharsets.UTF_8);
        originalErr.print(logged);
        assertThat(logged).contains("HTTP listener on").doesNotContain(TOKEN).doesNotContain(WRONG);
    }

    @Test
    void overTlsOnlyClientsTrustingTheServersCaGetIn() throws Exception {
        assumeTrue(TestCertificates.opensslAvailable(), "openssl is needed to make the test certificates");
        TestCertificates ours = TestCertificates.create(dir.resolve("ours"), "Sluice Test CA");
        TestCertificates theirs = TestCertificates.create(dir.resolve("theirs"), "Some Other CA");
        HttpApiConfig config = HttpApiConfig.builder().port(0)
                .tls(TlsConfig.forServer(ours.serverCertificate, ours.serverKey)).build();
        try (HttpApiServer server = new HttpApiServer(config, broker)) {
            URI https = URI.create("https://127.0.0.1:" + server.port() + "/health");

            HttpClient trusting = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .sslContext(TestCertificates.trusting(ours.caCertificate)).build();
            HttpResponse<String> ok = trusting.send(HttpRequest.newBuilder(https).timeout(TIMEOUT).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(ok.statusCode()).isEqualTo(200);
            HttpResponse<String> produced = trusting.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + server.port()
                    + "/v1/topics/secured/events")).timeout(TIMEOUT).POST(HttpRequest.BodyPublishers.ofString("{\"tls\":true}\n")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(produced.statusCode()).isEqualTo(200);

            HttpClient otherCa = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .sslContext(TestCertificates.trusting(theirs.caCertificate)).build();
            assertThatThrownBy(() -> otherCa.send(HttpRequest.newBuilder(https).timeout(TIMEOUT).build(), HttpResponse.BodyHandlers.ofString()))
                    .isInstanceOf(IOException.class);

            HttpClient plaintext = client();
            assertThatThrownBy(() -> plaintext.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/health"))
                    .timeout(TIMEOUT).build(), HttpResponse.BodyHandlers.ofString()))
                    .isInstanceOf(IOException.class);

            assertThat(nettyHandshake(TlsConfig.forClient(ours.caCertificate).newClientContext(), server.port()).isSuccess()).isTrue();
            assertThat(nettyHandshake(TlsConfig.forClient(theirs.caCertificate).newClientContext(), server.port()).isSuccess()).isFalse();
        }
    }

    /** A Netty TLS client (as the binary protocol's client would build one) handshaking with the server. */
    private static Future<Channel> nettyHandshake(SslContext ssl, int port) throws InterruptedException {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            SslHandler[] handler = new SslHandler[1];
            Channel channel = new Bootstrap().group(group).channel(NioSocketChannel.class)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            handler[0] = ssl.newHandler(ch.alloc(), "127.0.0.1", port);
                            ch.pipeline().addLast(handler[0], new io.netty.channel.ChannelInboundHandlerAdapter() {
                                @Override
                                public void exceptionCaught(io.netty.channel.ChannelHandlerContext ctx, Throwable cause) {
                                    ctx.close(); // the failed handshake is asserted through its future
                                }
                            });
                        }
                    }).connect("127.0.0.1", port).sync().channel();
            Future<Channel> handshake = handler[0].handshakeFuture().await();
            channel.close().sync();
            return handshake;
        } finally {
            group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
    }

    private static HttpResponse<String> request(HttpClient client, HttpApiServer server, String method, String path, String... headers) {
        return method.equals("GET") ? get(client, server, path, headers)
                : post(client, server, path, path.endsWith("/events") ? "{\"a\":1}\n" : "{\"name\":\"x-made\",\"partitions\":1}", headers);
    }
}
