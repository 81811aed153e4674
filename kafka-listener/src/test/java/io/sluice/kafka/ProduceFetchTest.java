package io.sluice.kafka;

import io.sluice.core.Acks;
import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.testkit.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ProduceFetchTest {
    @TempDir
    Path dir;

    private static Properties producerProperties(KafkaListenerFixture kafka, Map<String, String> extra) {
        Properties p = kafka.clientProperties();
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("delivery.timeout.ms", "20000");
        p.putAll(extra);
        return p;
    }

    private static KafkaConsumer<String, String> consumer(KafkaListenerFixture kafka) {
        Properties p = kafka.clientProperties();
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("enable.auto.commit", "false");
        p.put("fetch.max.wait.ms", "200");
        return new KafkaConsumer<>(p);
    }

    private static List<org.apache.kafka.clients.consumer.ConsumerRecord<String, String>> pollUntil(
            KafkaConsumer<String, String> consumer, int count) {
        List<org.apache.kafka.clients.consumer.ConsumerRecord<String, String>> out = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (out.size() < count && System.nanoTime() < deadline) {
            ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
            records.forEach(out::add);
        }
        return out;
    }

    @Test
    void recordsProducedByKafkaProducerAreFetchedByKafkaConsumerAndReadBySluiceConsumers() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir)) {
            kafka.broker.createTopic(TopicConfig.of("orders", 2));
            List<RecordMetadata> acked = new ArrayList<>();
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties(kafka,
                    Map.of("enable.idempotence", "false", "acks", "1", "linger.ms", "5")))) {
                List<Future<RecordMetadata>> sends = new ArrayList<>();
                for (int i = 0; i < 1000; i++) {
                    sends.add(producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>("orders", i % 2,
                            "k" + i, "v" + i)));
                }
                for (Future<RecordMetadata> f : sends) {
                    acked.add(f.get());
                }
            }
            assertThat(acked).extracting(RecordMetadata::offset).filteredOn(o -> o < 0).isEmpty();
            assertThat(acked.stream().filter(m -> m.partition() == 0).map(RecordMetadata::offset))
                    .containsExactlyElementsOf(java.util.stream.LongStream.range(0, 500).boxed().toList());

            try (KafkaConsumer<String, String> consumer = consumer(kafka)) {
                consumer.assign(List.of(new org.apache.kafka.common.TopicPartition("orders", 0),
                        new org.apache.kafka.common.TopicPartition("orders", 1)));
                consumer.seekToBeginning(consumer.assignment());
                var records = pollUntil(consumer, 1000);
                assertThat(records).hasSize(1000);
                assertThat(records.stream().filter(r -> r.partition() == 1).map(r -> r.value()).toList())
                        .startsWith("v1", "v3", "v5");
                assertThat(records).allSatisfy(r -> assertThat(r.value()).isEqualTo("v" + r.key().substring(1)));
            }

            try (Consumer sluice = kafka.broker.newConsumer(ConsumerConfig.builder().build())) {
                sluice.assign(Set.of(new TopicPartition("orders", 0)));
                sluice.seekToBeginning(Set.of(new TopicPartition("orders", 0)));
                List<ConsumerRecord> read = new ArrayList<>();
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (read.size() < 500 && System.nanoTime() < deadline) {
                    read.addAll(sluice.poll(Duration.ofMillis(100)));
                }
                assertThat(read).hasSize(500);
                assertThat(read.get(0).valueAsString()).isEqualTo("v0");
                assertThat(new String(read.get(499).key(), StandardCharsets.UTF_8)).isEqualTo("k998");
            }
        }
    }

    @Test
    void recordsProducedBySluiceAreFetchedByKafkaConsumerAndLongPollWakesOnAppend() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir)) {
            kafka.broker.createTopic(TopicConfig.of("events", 1));
            try (KafkaConsumer<String, String> consumer = consumer(kafka);
                 Producer producer = kafka.broker.newProducer(ProducerConfig.builder().acks(Acks.JOURNAL).build())) {
                consumer.assign(List.of(new org.apache.kafka.common.TopicPartition("events", 0)));
                consumer.seekToBeginning(consumer.assignment());
                assertThat(consumer.poll(Duration.ofMillis(300))).isEmpty();
                for (int i = 0; i < 10; i++) {
                    producer.send(ProducerRecord.of("events", "k" + i, "sluice-" + i)).join();
                }
                var records = pollUntil(consumer, 10);
                assertThat(records).extracting(r -> r.value())
                        .containsExactly("sluice-0", "sluice-1", "sluice-2", "sluice-3", "sluice-4", "sluice-5",
                                "sluice-6", "sluice-7", "sluice-8", "sluice-9");
                assertThat(records.get(3).offset()).isEqualTo(3);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"gzip", "snappy", "lz4", "zstd"})
    void compressedBatchesAreStoredUncompressedForEveryReader(String codec) throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir)) {
            kafka.broker.createTopic(TopicConfig.of("c", 1));
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties(kafka,
                    Map.of("compression.type", codec, "linger.ms", "20")))) {
                List<Future<RecordMetadata>> sends = new ArrayList<>();
                for (int i = 0; i < 200; i++) {
                    sends.add(producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>("c", "k" + i, "value-" + i)));
                }
                for (Future<RecordMetadata> f : sends) {
                    f.get();
                }
            }
            try (KafkaConsumer<String, String> consumer = consumer(kafka)) {
                consumer.assign(List.of(new org.apache.kafka.common.TopicPartition("c", 0)));
                consumer.seekToBeginning(consumer.assignment());
                var records = pollUntil(consumer, 200);
                assertThat(records).hasSize(200);
                assertThat(records.get(199).value()).isEqualTo("value-199");
            }
            try (Consumer sluice = kafka.broker.newConsumer(ConsumerConfig.builder().build())) {
                TopicPartition tp = new TopicPartition("c", 0);
                sluice.assign(Set.of(tp));
                sluice.seekToBeginning(Set.of(tp));
                List<ConsumerRecord> read = new ArrayList<>();
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (read.size() < 200 && System.nanoTime() < deadline) {
                    read.addAll(sluice.poll(Duration.ofMillis(100)));
                }
                assertThat(read).hasSize(200);
                assertThat(read.get(7).valueAsString()).isEqualTo("value-7");
            }
        }
    }

    @Test
    void aNullValueIsRefusedAtOnceAndNothingIsStored() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir)) {
            kafka.broker.createTopic(TopicConfig.of("t", 1));
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties(kafka, Map.of()))) {
                Future<RecordMetadata> send = producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>("t", "k", null));
                assertThatThrownBy(send::get).isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(InvalidRecordException.class).hasMessageContaining("null value");
            }
            assertThat(kafka.broker.endOffset(new TopicPartition("t", 0))).isZero();
        }
    }

    @Test
    void adminClientCreatesTopicsAndListsOffsetsByTimestamp() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir);
             Admin admin = Admin.create(kafka.clientProperties())) {
            admin.createTopics(List.of(new NewTopic("made", 3, (short) 1))).all().get();
            assertThat(kafka.broker.partitionCount("made")).isEqualTo(3);
            assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("made", 1, (short) 1))).all().get())
                    .hasCauseInstanceOf(org.apache.kafka.common.errors.TopicExistsException.class);
            assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("replicated", 1, (short) 3))).all().get())
                    .hasCauseInstanceOf(org.apache.kafka.common.errors.InvalidReplicationFactorException.class);

            try (Producer producer = kafka.broker.newProducer(ProducerConfig.builder().acks(Acks.JOURNAL).build())) {
                for (int i = 0; i < 5; i++) {
                    producer.send(ProducerRecord.of("made", "k", "v").withPartition(0).withTimestamp(1_000L * (i + 1))).join();
                }
            }
            org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition("made", 0);
            assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).partitionResult(tp).get().offset()).isZero();
            assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset()).isEqualTo(5);
            var byTime = admin.listOffsets(Map.of(tp, OffsetSpec.forTimestamp(2_500))).partitionResult(tp).get();
            assertThat(byTime.offset()).isEqualTo(2);
            assertThat(byTime.timestamp()).isEqualTo(3_000);
        }
    }

    @Test
    void acksZeroIsNotAnsweredAndAFailedAcksZeroProduceClosesTheConnection() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir)) {
            kafka.broker.createTopic(TopicConfig.of("quiet", 1));
            try (KafkaWire wire = new KafkaWire(kafka.listener.port())) {
                wire.sendRaw(produceFrame("quiet", new org.apache.kafka.common.record.SimpleRecord("k".getBytes(), "v".getBytes())));
                // no answer to acks=0: the next request's answer is the next thing on the wire
                var metadata = wire.call(org.apache.kafka.common.protocol.ApiKeys.METADATA, (short) 12,
                        new org.apache.kafka.common.message.MetadataRequestData().setTopics(null));
                assertThat(metadata.errorCounts()).containsOnlyKeys(org.apache.kafka.common.protocol.Errors.NONE);
                wire.sendRaw(produceFrame("quiet", new org.apache.kafka.common.record.SimpleRecord("k".getBytes(), null)));
                assertThat(wire.closedByServer()).isTrue();
            }
            // acks=0 (Acks.MEMORY) is appended in the background: nothing orders it before the next request's answer.
            // The refused batch was checked and dropped on the event loop before the close, so it never lands.
            TopicPartition quiet = new TopicPartition("quiet", 0);
            Await.until(() -> "end offset " + kafka.broker.endOffset(quiet), Duration.ofSeconds(10),
                    () -> kafka.broker.endOffset(quiet) >= 1);
            assertThat(kafka.broker.endOffset(quiet)).isEqualTo(1);
        }
    }

    /** A Produce v9 frame with acks=0 and one record batch for partition 0 of {@code topic}. */
    private static byte[] produceFrame(String topic, org.apache.kafka.common.record.SimpleRecord record) {
        org.apache.kafka.common.message.ProduceRequestData data = new org.apache.kafka.common.message.ProduceRequestData()
                .setAcks((short) 0).setTimeoutMs(1000);
        var topicData = new org.apache.kafka.common.message.ProduceRequestData.TopicProduceData().setName(topic);
        topicData.partitionData().add(new org.apache.kafka.common.message.ProduceRequestData.PartitionProduceData().setIndex(0)
                .setRecords(org.apache.kafka.common.record.MemoryRecords.withRecords(
                        org.apache.kafka.common.compress.Compression.NONE, record)));
        data.topicData().add(topicData);
        short version = 9;
        short headerVersion = org.apache.kafka.common.protocol.ApiKeys.PRODUCE.requestHeaderVersion(version);
        var header = new org.apache.kafka.common.message.RequestHeaderData()
                .setRequestApiKey(org.apache.kafka.common.protocol.ApiKeys.PRODUCE.id).setRequestApiVersion(version)
                .setCorrelationId(1000).setClientId("acks0");
        var cache = new org.apache.kafka.common.protocol.ObjectSerializationCache();
        int size = header.size(cache, headerVersion) + data.size(cache, version);
        java.nio.ByteBuffer frame = java.nio.ByteBuffer.allocate(4 + size).putInt(size);
        var writer = new org.apache.kafka.common.protocol.ByteBufferAccessor(frame);
        header.write(writer, cache, headerVersion);
        data.write(writer, cache, version);
        return frame.array();
    }
}
