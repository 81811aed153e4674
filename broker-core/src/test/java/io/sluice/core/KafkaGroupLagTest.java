package io.sluice.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Kafka group (client-side assignment) as Sluice's operators see it through {@link GroupAdmin}: the members with
 * the partitions their consumer-protocol assignments name, and lag on every partition of every topic it reads.
 */
class KafkaGroupLagTest {
    @TempDir
    Path dir;
    Broker broker;

    @BeforeEach
    void open() throws Exception {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("orders", 2));
        broker.createTopic(TopicConfig.of("refunds", 1));
        try (Producer p = broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 5; i++) {
                p.send(ProducerRecord.of("orders", null, "o" + i).withPartition(0)).get(10, TimeUnit.SECONDS);
                p.send(ProducerRecord.of("refunds", null, "r" + i).withPartition(0)).get(10, TimeUnit.SECONDS);
            }
        }
    }

    @AfterEach
    void close() {
        broker.close();
    }

    @Test
    void aKafkaGroupReadingTwoTopicsShowsLagOnEachWithTheMemberThatOwnsIt() {
        ClassicGroups groups = broker.classicGroups();
        ClassicGroups.JoinResult a = groups.join(join("")).join();
        CompletableFuture<ClassicGroups.JoinResult> bJoin = groups.join(join(""));
        groups.join(join(a.memberId())).join();
        ClassicGroups.JoinResult b = bJoin.join();
        groups.sync("kg", b.generation(), a.memberId(), "consumer", "range", Map.of(
                a.memberId(), assignment("orders", 0, 1), b.memberId(), assignment("refunds", 0))).join();
        groups.commit("kg", b.generation(), a.memberId(), Map.of(new TopicPartition("orders", 0), 2L));

        GroupStatus s = new GroupAdmin(broker).describe("kg");

        assertThat(s.topic()).isNull();
        assertThat(s.state()).isEqualTo("Stable");
        assertThat(s.members()).containsOnlyKeys(a.memberId(), b.memberId());
        assertThat(s.partitions()).containsExactly(
                new GroupStatus.PartitionLag("orders", 0, 2, 0, 5, 3, a.memberId()),
                new GroupStatus.PartitionLag("orders", 1, -1, 0, 0, 0, a.memberId()),
                new GroupStatus.PartitionLag("refunds", 0, -1, 0, 5, 5, b.memberId()));
        assertThat(s.totalLag()).isEqualTo(8);
        assertThat(new GroupAdmin(broker).list()).containsExactly("kg");
    }

    static ClassicGroups.JoinRequest join(String memberId) {
        return new ClassicGroups.JoinRequest("kg", memberId, null, "consumer",
                List.of(new ClassicGroups.Protocol("range", new byte[0])), 10_000, 30_000, "kafka-client", "/127.0.0.1", false);
    }

    static byte[] assignment(String topic, int... partitions) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeShort(1);
            out.writeInt(1);
            out.writeShort(topic.length());
            out.write(topic.getBytes(StandardCharsets.UTF_8));
            out.writeInt(partitions.length);
            for (int p : partitions) {
                out.writeInt(p);
            }
            out.writeInt(-1);
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
