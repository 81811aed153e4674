package io.sluice.cli;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.OffsetReset;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.net.testing.TestBroker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code sluice groups} and {@code sluice topics delete|alter} against a real broker over the binary protocol. */
class GroupsCommandTest {
    @TempDir
    Path dir;
    TestBroker broker;
    final AtomicLong now = new AtomicLong(Instant.parse("2026-11-23T17:00:00Z").toEpochMilli());
    ByteArrayOutputStream outBytes;
    ByteArrayOutputStream errBytes;

    @BeforeEach
    void start() {
        broker = TestBroker.start(dir, b -> b.clock(now::get), s -> s);
        broker.broker.createTopic(TopicConfig.of("orders", 2));
        try (var p = broker.broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 6; i++) { // one event per partition every 10 minutes: 17:00 ... 17:50
                now.set(Instant.parse("2026-11-23T17:00:00Z").toEpochMilli() + i * 600_000L);
                for (int part = 0; part < 2; part++) {
                    p.send(ProducerRecord.of("orders", null, "o" + i).withPartition(part)).join();
                }
            }
        }
    }

    @AfterEach
    void stop() {
        broker.close();
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

    @Test
    void describeAnswersHowFarBehindAGroupIs() {
        Consumer member = broker.broker.newConsumer(ConsumerConfig.builder().groupId("billing").clientId("billing-app")
                .offsetReset(OffsetReset.EARLIEST).sessionTimeoutMillis(60_000).build());
        member.subscribe("orders");
        member.commitSync(Map.of(new TopicPartition("orders", 0), 6L, new TopicPartition("orders", 1), 2L));

        assertThat(cli("groups", "list")).as(err()).isZero();
        assertThat(out()).isEqualTo("billing\n");

        assertThat(cli("groups", "describe", "--group", "billing")).as(err()).isZero();
        assertThat(out()).contains("group billing  topic orders  state Stable  generation 1  members 1  lag 4")
                .containsPattern("(?m)^0 +6 +0 +6 +0  billing-app")
                .containsPattern("(?m)^1 +2 +0 +6 +4  billing-app");
        member.close();

        assertThat(cli("groups", "describe", "--group", "nobody")).isEqualTo(SluiceCli.FAILED);
        assertThat(err()).contains("sluice groups describe: unknown group 'nobody'");
    }

    @Test
    void resetOffsetsIsADryRunUntilExecutedAndIsRefusedWhileMembersAreLive() {
        Consumer member = broker.broker.newConsumer(ConsumerConfig.builder().groupId("billing").clientId("billing-app")
                .offsetReset(OffsetReset.EARLIEST).sessionTimeoutMillis(60_000).build());
        member.subscribe("orders");
        member.commitSync(Map.of(new TopicPartition("orders", 0), 6L, new TopicPartition("orders", 1), 6L));

        assertThat(cli("groups", "reset-offsets", "--group", "billing", "--topic", "orders", "--to-datetime", "2026-11-23T17:25:00Z")).as(err()).isZero();
        assertThat(out()).containsPattern("(?m)^billing +orders +0 +6 +3 *$").contains("dry run: nothing changed; add --execute to apply");

        assertThat(cli("groups", "reset-offsets", "--group", "billing", "--topic", "orders", "--to-datetime",
                "2026-11-23T17:25:00Z", "--execute")).isEqualTo(SluiceCli.FAILED);
        assertThat(err()).contains("has members");
        assertThat(broker.broker.groups().committed("billing", new TopicPartition("orders", 0))).hasValue(6);

        member.close();
        assertThat(cli("groups", "reset-offsets", "--group", "billing", "--topic", "orders", "--to-datetime",
                "2026-11-23T18:25:00+01:00", "--execute")).as(err()).isZero();
        assertThat(out()).contains("offsets reset for group billing");
        assertThat(broker.broker.groups().committed("billing", new TopicPartition("orders", 1))).hasValue(3);

        assertThat(cli("groups", "reset-offsets", "--group", "billing", "--topic", "orders", "--shift-by", "-2", "--execute")).isZero();
        assertThat(broker.broker.groups().committed("billing", new TopicPartition("orders", 1))).hasValue(1);
    }

    @Test
    void badResetFlagsAreUsageErrors() {
        assertThat(cli("groups", "reset-offsets", "--group", "g", "--topic", "orders")).isEqualTo(SluiceCli.USAGE);
        assertThat(err()).contains("--to-earliest");
        assertThat(cli("groups", "reset-offsets", "--group", "g", "--topic", "orders", "--to-earliest", "--to-latest")).isEqualTo(SluiceCli.USAGE);
        assertThat(cli("groups", "reset-offsets", "--group", "g", "--topic", "orders", "--to-datetime", "yesterday")).isEqualTo(SluiceCli.USAGE);
        assertThat(err()).contains("ISO-8601");
    }

    @Test
    void topicsCanBeAlteredAndDeleted() {
        assertThat(cli("topics", "alter", "--topic", "orders", "--retention-ms", "86400000")).as(err()).isZero();
        assertThat(out()).contains("topic orders  retention.ms 86400000  retention.bytes -1");
        assertThat(broker.broker.describeTopic("orders").config().retentionMillis()).isEqualTo(86_400_000L);

        assertThat(cli("topics", "delete", "--topic", "orders")).as(err()).isZero();
        assertThat(broker.broker.listTopics()).doesNotContain("orders");
        assertThat(cli("topics", "delete", "--topic", "orders")).isEqualTo(SluiceCli.FAILED);
        assertThat(err()).contains("unknown topic 'orders'");
    }
}
