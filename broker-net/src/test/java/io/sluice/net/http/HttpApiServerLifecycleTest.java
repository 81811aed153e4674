package io.sluice.net.http;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.SluiceException;
import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.core.TopicConfig;
import io.sluice.net.http.HttpTestSupport.RawConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;

import static io.sluice.net.http.HttpTestSupport.await;
import static io.sluice.net.http.HttpTestSupport.client;
import static io.sluice.net.http.HttpTestSupport.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HttpApiServerLifecycleTest {
    @TempDir
    Path dataDir;

    private static boolean httpThreadsAlive() {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.isAlive() && t.getName().startsWith("sluice-http-"));
    }

    @Test
    void closeClosesConnectionsFreesThePortStopsItsThreadsAndCanBeCalledTwice() throws Exception {
        try (Broker broker = Broker.open(BrokerConfig.builder(dataDir).build())) {
            broker.createTopic(TopicConfig.of("life", 1));
            HttpApiServer server = new HttpApiServer(HttpApiConfig.builder().port(0).build(), broker);
            int port = server.port();
            assertThat(server.transport()).isIn("epoll", "nio");
            assertThat(post(client(), server, "/v1/topics/life/events", "1\n").statusCode()).isEqualTo(200);
            int before = server.connectionCount(); // the HTTP client above keeps its connection alive
            try (RawConnection idle = new RawConnection(port)) {
                await("the idle connection to be accepted", () -> server.connectionCount() > before);
                server.close();
                assertThat(idle.closedByServer()).isTrue();
            }
            server.close();
            // Netty completes the termination future just before the thread itself ends: wait for the threads, bounded
            await("no sluice-http-* thread to survive close()", () -> !httpThreadsAlive());
            assertThatThrownBy(() -> {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
                }
            }).isInstanceOf(IOException.class);
            assertThat(broker.isClosed()).as("the server does not own the broker").isFalse();
            assertThat(HttpTestSupport.endOffsetSum(broker, "life")).isEqualTo(1);
        }
    }

    @Test
    void aTakenPortFailsTheConstructorNamingTheAddressAndLeavesNoThreads() throws Exception {
        try (Broker broker = Broker.open(BrokerConfig.builder(dataDir).build());
             HttpApiServer first = new HttpApiServer(HttpApiConfig.builder().port(0).build(), broker)) {
            assertThatThrownBy(() -> new HttpApiServer(HttpApiConfig.builder().port(first.port()).build(), broker))
                    .isInstanceOf(SluiceException.class).hasMessageContaining("127.0.0.1:" + first.port());
        }
        await("threads to stop", () -> !httpThreadsAlive());
    }

    @Test
    void settingsCanComeFromTheBrokersPropertiesFile() {
        java.util.Properties p = new java.util.Properties();
        p.setProperty("http.max.body.bytes", "1048576");
        p.setProperty("http.idle.timeout.ms", "5_000");
        p.setProperty("unrelated.key", "ignored");
        HttpApiConfig config = HttpApiConfig.fromProperties(p).port(9090).build();
        assertThat(config.maxBodyBytes()).isEqualTo(1 << 20);
        assertThat(config.idleTimeoutMillis()).isEqualTo(5000);
        assertThat(config.maxLineBytes()).isEqualTo(HttpApiConfig.DEFAULT_MAX_LINE_BYTES);
        assertThat(config.port()).isEqualTo(9090);
        assertThat(config.tls()).isNull();
    }

    @Test
    void invalidSettingsAreRefusedNamingTheSettingAndTheValue() {
        assertThatThrownBy(() -> HttpApiConfig.builder().maxBodyBytes(4096).maxLineBytes(8192).build())
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("http.max.line.bytes").hasMessageContaining("8192");
        assertThatThrownBy(() -> HttpApiConfig.builder().port(70_000).build())
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("http.port").hasMessageContaining("70000");
        assertThatThrownBy(() -> HttpApiConfig.builder().maxConnections(0).build())
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("http.max.connections");
        java.util.Properties bad = new java.util.Properties();
        bad.setProperty("http.max.connections", "lots");
        assertThatThrownBy(() -> HttpApiConfig.fromProperties(bad))
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("http.max.connections").hasMessageContaining("lots");
        assertThatThrownBy(() -> HttpApiConfig.builder().maxUnauthenticatedConnections(0).build())
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("http.max.unauthenticated.connections");
        assertThatThrownBy(() -> HttpApiConfig.builder().headerTimeoutMillis(0).build())
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("http.header.timeout.ms");
        java.util.Properties unauth = new java.util.Properties();
        unauth.setProperty("http.max.unauthenticated.connections", "7");
        unauth.setProperty("http.header.timeout.ms", "1500");
        HttpApiConfig fromFile = HttpApiConfig.fromProperties(unauth).build();
        assertThat(fromFile.maxUnauthenticatedConnections()).isEqualTo(7);
        assertThat(fromFile.headerTimeoutMillis()).isEqualTo(1500);
        assertThat(fromFile.toBuilder().build()).isEqualTo(fromFile);
        assertThat(HttpApiConfig.DEFAULT.bindAddress()).isEqualTo("127.0.0.1");
        assertThat(HttpApiConfig.DEFAULT.port()).isEqualTo(8080);
    }
}
