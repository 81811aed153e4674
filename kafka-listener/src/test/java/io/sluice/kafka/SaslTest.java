package io.sluice.kafka;

import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SaslTest {
    static final String TOKEN = "kafka-listener-test-token-0123456789";

    @TempDir
    Path dir;

    private static KafkaListenerFixture start(Path dir) {
        return KafkaListenerFixture.start(dir, s -> s.authToken(TOKEN).authMaxFrameBytes(8192).authTimeoutMillis(5_000));
    }

    private static Properties sasl(KafkaListenerFixture kafka, String password) {
        Properties p = kafka.clientProperties();
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", "PLAIN");
        p.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"app\" "
                + "password=\"" + password + "\";");
        p.put("max.block.ms", "10000");
        p.put("delivery.timeout.ms", "15000");
        return p;
    }

    @Test
    void aKafkaProducerPresentingTheBrokerTokenAsPlainPasswordProduces() throws Exception {
        try (KafkaListenerFixture kafka = start(dir)) {
            kafka.broker.createTopic(TopicConfig.of("secure", 1));
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(sasl(kafka, TOKEN))) {
                assertThat(producer.send(new ProducerRecord<>("secure", "k", "v")).get().offset()).isZero();
            }
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(sasl(kafka, "wrong-password-of-some-length"))) {
                assertThatThrownBy(() -> producer.send(new ProducerRecord<>("secure", "k", "v")).get())
                        .satisfiesAnyOf(
                                e -> assertThat(e).isInstanceOf(SaslAuthenticationException.class),
                                e -> assertThat(e).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(SaslAuthenticationException.class));
            }
            assertThat(kafka.broker.endOffset(new TopicPartition("secure", 0))).isEqualTo(1);
        }
    }

    @Test
    void beforeAuthenticationOnlyApiVersionsAndSaslAreServedAndLargeFramesCloseTheConnection() throws Exception {
        try (KafkaListenerFixture kafka = start(dir)) {
            try (KafkaWire wire = new KafkaWire(kafka.listener.port())) {
                ApiVersionsResponse versions = (ApiVersionsResponse) wire.call(ApiKeys.API_VERSIONS, (short) 3,
                        new ApiVersionsRequestData().setClientSoftwareName("wire").setClientSoftwareVersion("1"));
                assertThat(versions.data().errorCode()).isZero();
                wire.sendRaw(frame(ApiKeys.METADATA, new MetadataRequestData().setTopics(null)));
                assertThat(wire.closedByServer()).isTrue();
            }
            try (KafkaWire wire = new KafkaWire(kafka.listener.port())) {
                wire.sendRaw(ByteBuffer.allocate(8).putInt(100 << 20).putInt(0x00120003).array()); // 100 MiB announced
                assertThat(wire.closedByServer()).isTrue();
            }
            try (KafkaWire wire = new KafkaWire(kafka.listener.port())) {
                SaslHandshakeResponse handshake = (SaslHandshakeResponse) wire.call(ApiKeys.SASL_HANDSHAKE, (short) 1,
                        new SaslHandshakeRequestData().setMechanism("PLAIN"));
                assertThat(handshake.error()).isEqualTo(Errors.NONE);
                SaslAuthenticateResponse auth = (SaslAuthenticateResponse) wire.call(ApiKeys.SASL_AUTHENTICATE, (short) 2,
                        new SaslAuthenticateRequestData().setAuthBytes(("\0app\0" + "not-the-token").getBytes(StandardCharsets.UTF_8)));
                assertThat(auth.error()).isEqualTo(Errors.SASL_AUTHENTICATION_FAILED);
                assertThat(wire.closedByServer()).isTrue();
            }
        }
    }

    /** A v12 request frame of {@code api}. */
    private static byte[] frame(ApiKeys api, org.apache.kafka.common.protocol.ApiMessage body) {
        org.apache.kafka.common.message.RequestHeaderData header = new org.apache.kafka.common.message.RequestHeaderData()
                .setRequestApiKey(api.id).setRequestApiVersion((short) 12).setCorrelationId(1).setClientId("x");
        org.apache.kafka.common.protocol.ObjectSerializationCache cache = new org.apache.kafka.common.protocol.ObjectSerializationCache();
        short hv = api.requestHeaderVersion((short) 12);
        int size = header.size(cache, hv) + body.size(cache, (short) 12);
        ByteBuffer out = ByteBuffer.allocate(4 + size).putInt(size);
        org.apache.kafka.common.protocol.ByteBufferAccessor w = new org.apache.kafka.common.protocol.ByteBufferAccessor(out);
        header.write(w, cache, hv);
        body.write(w, cache, (short) 12);
        return out.array();
    }
}
