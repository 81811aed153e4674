package io.sluice.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.testkit.ChildJvm;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.tools.ClientCompatibilityTest;
import org.apache.kafka.tools.VerifiableConsumer;
import org.apache.kafka.tools.VerifiableProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka's own system-test tools from the kafka-tools jar, each in a child JVM pointed at the listener: what Kafka's
 * ducktape suites run against a real broker. They print one JSON event per line on stdout; the test reads those
 * events and checks them against what Sluice stored.
 */
class KafkaToolsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void verifiableProducerGetsEveryRecordAckedAndSluiceReadsEachOnceAtItsAckedOffset() throws Exception {
        int records = 3000;
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir)) {
            kafka.broker.createTopic(TopicConfig.of("verified", 3));
            List<JsonNode> events = runTool(VerifiableProducer.class, 120, "--topic", "verified",
                    "--bootstrap-server", kafka.bootstrap(), "--max-messages", Integer.toString(records),
                    "--throughput", "-1", "--acks", "-1");

            // value -> "partition/offset" from each producer_send_success event
            Map<String, String> acked = new HashMap<>();
            JsonNode toolData = null;
            for (JsonNode e : events) {
                switch (e.path("name").asText()) {
                    case "producer_send_success" -> assertThat(acked.put(e.get("value").asText(),
                            e.get("partition").asInt() + "/" + e.get("offset").asLong())).as("acked twice").isNull();
                    case "producer_send_error" -> throw new AssertionError("send failed: " + e);
                    case "tool_data" -> toolData = e;
                    default -> { }
                }
            }
            assertThat(toolData).as("tool_data event").isNotNull();
            assertThat(toolData.get("sent").asLong()).isEqualTo(records);
            assertThat(toolData.get("acked").asLong()).isEqualTo(records);
            assertThat(acked).hasSize(records);
            for (int i = 0; i < records; i++) {
                assertThat(acked).containsKey(Integer.toString(i));
            }

            Map<String, String> stored = new HashMap<>();
            try (Consumer sluice = kafka.broker.newConsumer(ConsumerConfig.builder().build())) {
                Set<TopicPartition> partitions = Set.of(new TopicPartition("verified", 0),
                        new TopicPartition("verified", 1), new TopicPartition("verified", 2));
                sluice.assign(partitions);
                sluice.seekToBeginning(partitions);
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (stored.size() < records && System.nanoTime() < deadline) {
                    for (ConsumerRecord r : sluice.poll(Duration.ofMillis(100))) {
                        assertThat(stored.put(r.valueAsString(), r.partition() + "/" + r.offset()))
                                .as("stored twice: %s", r.valueAsString()).isNull();
                    }
                }
                assertThat(sluice.poll(Duration.ofMillis(200))).as("nothing beyond the acked records").isEmpty();
            }
            assertThat(stored).isEqualTo(acked);
        }
    }

    @Test
    void verifiableConsumerInAGroupConsumesAndCommitsEveryRecord() throws Exception {
        int records = 2000;
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir)) {
            kafka.broker.createTopic(TopicConfig.of("orders", 4));
            Properties p = kafka.clientProperties();
            Set<String> produced = new HashSet<>();
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
                for (int i = 0; i < records; i++) {
                    String value = "order-" + i;
                    producer.send(new ProducerRecord<>("orders", i % 4, null, value));
                    produced.add(value);
                }
                producer.flush();
            }

            List<JsonNode> events = runTool(VerifiableConsumer.class, 120, "--topic", "orders",
                    "--group-id", "verifiers", "--bootstrap-server", kafka.bootstrap(),
                    "--max-messages", Integer.toString(records), "--reset-policy", "earliest", "--verbose");

            List<String> consumed = new ArrayList<>();
            long countedInBatches = 0;
            Map<Integer, Long> lastCommitted = new HashMap<>();
            boolean assigned = false;
            for (JsonNode e : events) {
                switch (e.path("name").asText()) {
                    case "partitions_assigned" -> assigned |= e.get("partitions").size() > 0;
                    case "record_data" -> consumed.add(e.get("value").asText());
                    case "records_consumed" -> countedInBatches += e.get("count").asLong();
                    case "offsets_committed" -> {
                        assertThat(e.get("success").asBoolean()).as("commit failed: %s", e).isTrue();
                        for (JsonNode o : e.get("offsets")) {
                            lastCommitted.put(o.get("partition").asInt(), o.get("offset").asLong());
                        }
                    }
                    default -> { }
                }
            }
            assertThat(assigned).as("partitions_assigned with partitions").isTrue();
            assertThat(countedInBatches).isEqualTo(records);
            assertThat(consumed).hasSize(records).doesNotHaveDuplicates();
            assertThat(new HashSet<>(consumed)).isEqualTo(produced);
            assertThat(lastCommitted).containsExactlyInAnyOrderEntriesOf(
                    Map.of(0, 500L, 1, 500L, 2, 500L, 3, 500L));

            try (Admin admin = Admin.create(p)) {
                Map<org.apache.kafka.common.TopicPartition, OffsetAndMetadata> committed =
                        admin.listConsumerGroupOffsets("verifiers").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
                assertThat(committed).hasSize(4);
                committed.values().forEach(o -> assertThat(o.offset()).isEqualTo(500L));
            }
        }
    }

    /**
     * Kafka's client compatibility check (ducktape's client_compatibility_features_test): Admin describeCluster,
     * createTopics, listTopics; a default (idempotent) producer; a consumer's partitionsFor, offsetsForTimes,
     * beginning/end offsets, and a record larger than max.partition.fetch.bytes still returned (KIP-74); the
     * cluster id seen by a ClusterResourceListener. DescribeConfigs and DescribeAcls are not served by Sluice (no
     * broker configs in Kafka's form, no ACLs): the tool is told so and checks the client gets
     * UnsupportedVersionException for both, at once.
     */
    @Test
    void clientCompatibilityTestPassesWithDescribeConfigsAndDescribeAclsUnsupported() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir)) {
            kafka.broker.createTopic(TopicConfig.of("compat", 1));
            List<String> out = new ArrayList<>();
            int exit;
            try (ChildJvm tool = ChildJvm.start(ClientCompatibilityTest.class, "--topic", "compat",
                    "--bootstrap-server", kafka.bootstrap(),
                    "--offsets-for-times-supported", "true",
                    "--cluster-id-supported", "true",
                    "--expect-record-too-large-exception", "false",
                    "--num-cluster-nodes", "1",
                    "--create-topics-supported", "true",
                    "--describe-acls-supported", "false",
                    "--describe-configs-supported", "false",
                    "--idempotent-producer-supported", "true")) {
                for (String line; (line = tool.readLine()) != null; ) {
                    out.add(line);
                }
                exit = tool.waitFor(60);
            }
            assertThat(out).as("tool output").contains("SUCCESS.");
            assertThat(exit).as("exit code, output %s", out).isZero();
            assertThat(kafka.broker.listTopics()).contains("newtopic");
        }
    }

    /** Runs a tool to its end and returns its JSON events (other stdout lines, e.g. logging, are skipped). */
    static List<JsonNode> runTool(Class<?> main, long timeoutSeconds, String... args) throws IOException, InterruptedException {
        List<JsonNode> events = new ArrayList<>();
        try (ChildJvm tool = ChildJvm.start(main, args)) {
            for (String line; (line = tool.readLine()) != null; ) {
                if (line.startsWith("{")) {
                    events.add(JSON.readTree(line));
                }
            }
            assertThat(tool.waitFor(timeoutSeconds)).as(main.getSimpleName() + " exit code").isZero();
        }
        return events;
    }
}
