package io.sluice.cli;

import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.kafka.KafkaListener;
import io.sluice.kafka.KafkaListenerConfig;
import io.sluice.net.server.BrokerServerConfig;
import io.sluice.net.testing.TestBroker;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code sluice groups list/describe} show a group of Kafka clients (reading two topics) like one of Sluice's own. */
class KafkaGroupsCommandTest {
    @TempDir
    Path dir;
    TestBroker broker;
    KafkaListener kafka;
    ByteArrayOutputStream outBytes;
    ByteArrayOutputStream errBytes;

    @BeforeEach
    void start() {
        broker = TestBroker.start(dir);
        kafka = KafkaListener.start(broker.broker, KafkaListenerConfig.of(0, BrokerServerConfig.builder().ioThreads(1).build()));
        broker.broker.createTopic(TopicConfig.of("orders", 2));
        broker.broker.createTopic(TopicConfig.of("refunds", 1));
        try (var p = broker.broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 6; i++) {
                p.send(ProducerRecord.of("orders", null, "o" + i).withPartition(i % 2)).join();
                p.send(ProducerRecord.of("refunds", null, "r" + i).withPartition(0)).join();
            }
        }
    }

    @AfterEach
    void stop() {
        kafka.close();
        broker.close();
    }

    @Test
    void describeShowsAKafkaGroupsMembersPartitionsAndLagOnEachTopic() {
        Properties p = new Properties();
        p.put("bootstrap.servers", "127.0.0.1:" + kafka.port());
        p.put("group.id", "shop");
        p.put("client.id", "shop-app");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        p.put("session.timeout.ms", "30000");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(List.of("orders", "refunds"));
            int read = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (read < 12 && System.nanoTime() < deadline) {
                read += consumer.poll(Duration.ofMillis(200)).count();
            }
            assertThat(read).isEqualTo(12);
            // the member commits all of orders, half of refunds: 3 events behind
            consumer.commitSync(java.util.Map.of(
                    new org.apache.kafka.common.TopicPartition("orders", 0), new org.apache.kafka.clients.consumer.OffsetAndMetadata(3),
                    new org.apache.kafka.common.TopicPartition("orders", 1), new org.apache.kafka.clients.consumer.OffsetAndMetadata(3),
                    new org.apache.kafka.common.TopicPartition("refunds", 0), new org.apache.kafka.clients.consumer.OffsetAndMetadata(3)));

            assertThat(cli("groups", "list")).as(err()).isZero();
            assertThat(out()).isEqualTo("shop\n");
            assertThat(cli("groups", "describe", "--group", "shop")).as(err()).isZero();
            assertThat(out()).contains("group shop  topic -  state Stable  generation 1  members 1  lag 3")
                    .containsPattern("(?m)^orders +0 +3 +0 +3 +0  shop-app-")
                    .containsPattern("(?m)^orders +1 +3 +0 +3 +0  shop-app-")
                    .containsPattern("(?m)^refunds +0 +3 +0 +6 +3  shop-app-");
        }

        assertThat(cli("groups", "describe", "--group", "shop")).as(err()).isZero();
        assertThat(out()).as("after the member left: its commits stay").contains("state Empty")
                .containsPattern("(?m)^refunds +0 +3 +0 +6 +3  -");
    }

    int cli(String... args) {
        outBytes = new ByteArrayOutputStream();
        errBytes = new ByteArrayOutputStream();
        String[] all = new String[args.length + 2];
        System.arraycopy(args, 0, all, 0, args.length);
        all[args.length] = "--bootstrap";
        all[args.length + 1] = broker.bootstrap();
        return SluiceCli.run(all, new PrintStream(outBytes, true, StandardCharsets.UTF_8), new PrintStream(errBytes, true, StandardCharsets.UTF_8));
    }

    String out() {
        return outBytes.toString(StandardCharsets.UTF_8);
    }

    String err() {
        return errBytes.toString(StandardCharsets.UTF_8);
    }
}
