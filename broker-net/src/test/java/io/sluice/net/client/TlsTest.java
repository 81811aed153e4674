package io.sluice.net.client;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.net.testing.TestBroker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The binary port with TLS from PEM files (made by openssl for the test): only clients trusting its CA get in. */
class TlsTest {
    @TempDir
    Path dir;
    private TestBroker broker;
    private Path cert;
    private Path otherCert;

    private static void selfSigned(Path dir, String name) throws Exception {
        Process p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-nodes", "-keyout", dir.resolve(name + "-key.pem").toString(), "-out", dir.resolve(name + "-cert.pem").toString(),
                "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost")
                .redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
    }

    @BeforeEach
    void start() throws Exception {
        selfSigned(dir, "server");
        selfSigned(dir, "other");
        cert = dir.resolve("server-cert.pem");
        otherCert = dir.resolve("other-cert.pem");
        SslContext server = SslContextBuilder.forServer(cert.toFile(), dir.resolve("server-key.pem").toFile()).build();
        broker = TestBroker.start(dir.resolve("data"), b -> b, s -> s.sslContext(server));
        broker.broker.createTopic(TopicConfig.of("secure", 1));
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    @Test
    void aClientTrustingTheServersCertificateProducesOverTls() throws Exception {
        SslContext client = SslContextBuilder.forClient().trustManager(cert.toFile()).build();
        ClientConfig config = ClientConfig.builder(broker.bootstrap()).sslContext(client).build();
        try (RemoteProducer p = new RemoteProducer(RemoteProducerConfig.builder(config).producer(ProducerConfig.DEFAULT).build())) {
            assertThat(p.send(ProducerRecord.of("secure", null, "over tls")).get(10, TimeUnit.SECONDS).offset()).isZero();
        }
    }

    @Test
    void aPlaintextClientIsRefused() {
        assertThatThrownBy(() -> {
            try (RemoteAdmin admin = new RemoteAdmin(ClientConfig.builder(broker.bootstrap()).requestTimeoutMillis(10_000).build())) {
                admin.listTopics();
            }
        }).isInstanceOf(SluiceException.class);
    }

    @Test
    void aClientTrustingAnotherCertificateIsRefused() throws Exception {
        SslContext client = SslContextBuilder.forClient().trustManager(otherCert.toFile()).build();
        ClientConfig config = ClientConfig.builder(broker.bootstrap()).sslContext(client).requestTimeoutMillis(10_000).build();
        assertThatThrownBy(() -> {
            try (RemoteAdmin admin = new RemoteAdmin(config)) {
                admin.listTopics();
            }
        }).isInstanceOf(SluiceException.class);
    }
}
