package io.sluice.kafka;

import io.sluice.core.TopicConfig;
import io.sluice.testkit.ChildJvm;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class IdempotentProducerTest {
    @TempDir
    Path dir;

    private static Properties producerProperties(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        return p; // otherwise Kafka's defaults: idempotence on, acks=all, 5 in flight
    }

    private static Map<String, Integer> readAll(String bootstrap, String topic, int partitions) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        Map<String, Integer> seen = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) {
                tps.add(new TopicPartition(topic, i));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < deadline && tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                records.forEach(r -> seen.merge(r.value(), 1, Integer::sum));
            }
        }
        return seen;
    }

    @Test
    void aDefaultKafkaProducerContinuesItsSequencesAcrossABrokerRestart() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String bootstrap = "127.0.0.1:" + port;
        io.sluice.net.server.BrokerServerConfig server = io.sluice.net.server.BrokerServerConfig.builder().ioThreads(1).build();
        io.sluice.core.Broker broker = io.sluice.core.Broker.open(io.sluice.core.BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("t", 1));
        KafkaListener listener = KafkaListener.start(broker, KafkaListenerConfig.of(port, server));
        Properties props = producerProperties(bootstrap);
        props.put("delivery.timeout.ms", "60000");
        props.put("request.timeout.ms", "5000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int i = 0; i < 50; i++) {
                producer.send(new ProducerRecord<>("t", "k", "before-" + i)).get();
            }
            listener.close();
            broker.close();
            // a new broker process state: the producer's sequence (50) must be known from the journal, or it is refused
            broker = io.sluice.core.Broker.open(io.sluice.core.BrokerConfig.builder(dir).build());
            listener = KafkaListener.start(broker, KafkaListenerConfig.of(port, server));
            RecordMetadata after = producer.send(new ProducerRecord<>("t", "k", "after")).get();
            assertThat(after.offset()).isEqualTo(50);
        } finally {
            listener.close();
            broker.close();
        }
        Path dataDir = dir;
        try (io.sluice.core.Broker reopened = io.sluice.core.Broker.open(io.sluice.core.BrokerConfig.builder(dataDir).build());
             KafkaListener again = KafkaListener.start(reopened, KafkaListenerConfig.of(0, server))) {
            Map<String, Integer> seen = readAll("127.0.0.1:" + again.port(), "t", 1);
            assertThat(seen).hasSize(51).allSatisfy((value, times) -> assertThat(times).isEqualTo(1));
        }
    }

    @Test
    void anIdempotentProducerRetryingAcrossASigkillStoresEveryAcknowledgedRecordExactlyOnce() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String bootstrap = "127.0.0.1:" + port;
        Path data = dir.resolve("data");
        List<Future<RecordMetadata>> sends = new ArrayList<>();
        int total = 20_000;
        ChildJvm child = ChildJvm.start(KafkaBrokerProcess.class, data.toString(), Integer.toString(port));
        try {
            assertThat(child.readLine()).isEqualTo("READY");
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
                admin.createTopics(List.of(new NewTopic("crash", 2, (short) 1))).all().get();
            }
            Properties props = producerProperties(bootstrap);
            props.put("delivery.timeout.ms", "120000");
            props.put("request.timeout.ms", "3000");
            props.put("retry.backoff.ms", "100");
            props.put("linger.ms", "2");
            props.put("batch.size", "4096");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
                for (int i = 0; i < total; i++) {
                    sends.add(producer.send(new ProducerRecord<>("crash", "k" + i, "v" + i)));
                    if (i == total / 3) {
                        sends.get(i).get(); // some batches acknowledged, more in flight: now crash
                        child.kill();
                        child = ChildJvm.start(KafkaBrokerProcess.class, data.toString(), Integer.toString(port));
                        assertThat(child.readLine()).isEqualTo("READY");
                    }
                }
                producer.flush();
            }
            List<String> acknowledged = new ArrayList<>();
            for (int i = 0; i < total; i++) {
                try {
                    sends.get(i).get();
                    acknowledged.add("v" + i);
                } catch (ExecutionException e) {
                    // not acknowledged: may be stored or not, but never twice
                }
            }
            Map<String, Integer> seen = readAll(bootstrap, "crash", 2);
            assertThat(acknowledged).hasSizeGreaterThan(total / 2);
            assertThat(seen.keySet()).containsAll(acknowledged);
            assertThat(seen.entrySet()).allSatisfy(e -> assertThat(e.getValue()).as(e.getKey()).isEqualTo(1));
        } finally {
            child.close();
        }
    }

    @Test
    void aTransactionalProducerIsRefusedAtOnce() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir)) {
            Properties props = producerProperties(kafka.bootstrap());
            props.put("transactional.id", "tx-1");
            props.put("max.block.ms", "60000");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
                // the client asks FindCoordinator(TRANSACTION) first: refused with an error it reports, not a retry loop
                assertThatThrownBy(producer::initTransactions).isInstanceOfAny(
                        TransactionalIdAuthorizationException.class, UnsupportedVersionException.class);
            }
            try (KafkaWire wire = new KafkaWire(kafka.listener.port())) {
                InitProducerIdResponse answer = (InitProducerIdResponse) wire.call(ApiKeys.INIT_PRODUCER_ID, (short) 4,
                        new InitProducerIdRequestData().setTransactionalId("tx-1").setTransactionTimeoutMs(60_000)
                                .setProducerId(-1).setProducerEpoch((short) -1));
                assertThat(answer.error()).isEqualTo(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
            }
        }
    }
}
