package io.sluice.kafka;

import io.sluice.core.TopicConfig;
import io.sluice.net.security.TestCertificates;
import io.sluice.net.security.TlsConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/** The broker's TLS settings apply to the Kafka port: a Kafka client trusting the broker's CA produces over SASL_SSL. */
class TlsTest {
    static final String TOKEN = "kafka-listener-tls-token-0123456789";

    @TempDir
    Path dir;

    @Test
    void aKafkaProducerTrustingTheBrokersCaProducesOverSaslSsl() throws Exception {
        TestCertificates certs = TestCertificates.create(dir.resolve("tls"), "sluice-test-ca");
        io.netty.handler.ssl.SslContext server = new TlsConfig(certs.serverCertificate, certs.serverKey, null, null).newServerContext();
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir.resolve("data"), s -> s.sslContext(server).authToken(TOKEN))) {
            kafka.broker.createTopic(TopicConfig.of("secure", 1));
            Properties p = kafka.clientProperties();
            p.put("key.serializer", StringSerializer.class.getName());
            p.put("value.serializer", StringSerializer.class.getName());
            p.put("security.protocol", "SASL_SSL");
            p.put("ssl.truststore.type", "PEM");
            p.put("ssl.truststore.location", certs.caCertificate.toString());
            p.put("sasl.mechanism", "PLAIN");
            p.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"app\" "
                    + "password=\"" + TOKEN + "\";");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
                assertThat(producer.send(new ProducerRecord<>("secure", "k", "over tls")).get().offset()).isZero();
            }
        }
    }
}
