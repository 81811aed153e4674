package io.sluice.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Consumer-group tooling: describe with lag, reset offsets (dry run, execute, refused while members are live). */
class GroupAdminTest {
    @TempDir
    Path dir;
    Broker broker;
    GroupAdmin admin;
    /** event timestamps come from this clock, so a reset to a date-time has exact answers */
    final AtomicLong now = new AtomicLong(1_700_000_000_000L);

    @BeforeEach
    void open() {
        broker = Broker.open(BrokerConfig.builder(dir).clock(now::get).build());
        broker.createTopic(TopicConfig.of("jobs", 2));
        admin = new GroupAdmin(broker);
    }

    @AfterEach
    void close() {
        broker.close();
    }

    /** Ten events per partition; event i of each partition is stamped now + i minutes. */
    long produceTenPerPartitionOneMinuteApart() throws Exception {
        long t0 = now.get();
        try (Producer p = broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 10; i++) {
                now.set(t0 + TimeUnit.MINUTES.toMillis(i));
                for (int part = 0; part < 2; part++) {
                    p.send(ProducerRecord.of("jobs", null, "job-" + i).withPartition(part)).get(10, TimeUnit.SECONDS);
                }
            }
        }
        return t0;
    }

    Consumer member(String client) {
        Consumer c = broker.newConsumer(ConsumerConfig.builder().groupId("billing").clientId(client)
                .offsetReset(OffsetReset.EARLIEST).sessionTimeoutMillis(5_000).build());
        c.subscribe("jobs");
        return c;
    }

    static int consume(Consumer c, int atLeast) {
        List<ConsumerRecord> got = new ArrayList<>();
        while (got.size() < atLeast) {
            got.addAll(c.poll(Duration.ofMillis(200)));
        }
        return got.size();
    }

    @Test
    void describeShowsCommittedOffsetsLagAndOwnersPerPartition() throws Exception {
        produceTenPerPartitionOneMinuteApart();
        Consumer c = member("a");
        c.commitSync(Map.of(new TopicPartition("jobs", 0), 4L, new TopicPartition("jobs", 1), 10L));

        assertThat(admin.list()).containsExactly("billing");
        GroupStatus s = admin.describe("billing");
        assertThat(s.topic()).isEqualTo("jobs");
        assertThat(s.state()).isEqualTo("Stable");
        assertThat(s.members()).hasSize(1);
        assertThat(s.partitions()).extracting(GroupStatus.PartitionLag::committed).containsExactly(4L, 10L);
        assertThat(s.partitions()).extracting(GroupStatus.PartitionLag::lag).containsExactly(6L, 0L);
        assertThat(s.partitions()).extracting(GroupStatus.PartitionLag::member).containsOnly(s.members().keySet().iterator().next());
        assertThat(s.totalLag()).isEqualTo(6);
        c.close();

        GroupStatus afterLeave = admin.describe("billing");
        assertThat(afterLeave.state()).isEqualTo("Empty");
        assertThat(afterLeave.partitions()).extracting(GroupStatus.PartitionLag::member).containsOnlyNulls();
    }

    @Test
    void resetIsADryRunUnlessExecutedAndIsRefusedWhileMembersAreLive() throws Exception {
        produceTenPerPartitionOneMinuteApart();
        Consumer c = member("a");
        consume(c, 20);
        c.commitSync();

        OffsetResetPlan dry = admin.resetOffsets("billing", "jobs", OffsetResetSpec.toEarliest(), false);
        assertThat(dry.executed()).isFalse();
        assertThat(dry.partitions()).extracting(OffsetResetPlan.Row::target).containsExactly(0L, 0L);
        assertThat(broker.groups().committed("billing", new TopicPartition("jobs", 0))).hasValue(10);

        assertThatThrownBy(() -> admin.resetOffsets("billing", "jobs", OffsetResetSpec.toEarliest(), true))
                .isInstanceOf(SluiceException.NonEmptyGroupException.class)
                .hasMessageContaining("has members");
        assertThat(broker.groups().committed("billing", new TopicPartition("jobs", 0))).hasValue(10);

        c.close();
        OffsetResetPlan done = admin.resetOffsets("billing", "jobs", OffsetResetSpec.shiftBy(-3), true);
        assertThat(done.executed()).isTrue();
        assertThat(done.partitions()).extracting(OffsetResetPlan.Row::committed).containsExactly(10L, 10L);
        assertThat(done.partitions()).extracting(OffsetResetPlan.Row::target).containsExactly(7L, 7L);

        // the next member resumes from the reset offsets: the last three events of each partition again
        Consumer again = member("b");
        assertThat(consume(again, 6)).isEqualTo(6);
        again.close();
    }

    @Test
    void resetToADatetimeFindsTheFirstEventAtOrAfterIt() throws Exception {
        long t0 = produceTenPerPartitionOneMinuteApart();
        Instant sixMinutesIn = Instant.ofEpochMilli(t0 + TimeUnit.MINUTES.toMillis(6) - 1);
        OffsetResetPlan plan = admin.resetOffsets("replay", "jobs", OffsetResetSpec.toDatetime(sixMinutesIn), true);
        assertThat(plan.partitions()).extracting(OffsetResetPlan.Row::target).containsExactly(6L, 6L);
        assertThat(admin.describe("replay").totalLag()).isEqualTo(8);
    }

    @Test
    void targetsAreClampedIntoTheRetainedRange() throws Exception {
        produceTenPerPartitionOneMinuteApart();
        assertThat(admin.resetOffsets("g", "jobs", OffsetResetSpec.toOffset(1_000), false).partitions())
                .extracting(OffsetResetPlan.Row::target).containsExactly(10L, 10L);
        assertThat(admin.resetOffsets("g", "jobs", OffsetResetSpec.shiftBy(Long.MIN_VALUE), false).partitions())
                .extracting(OffsetResetPlan.Row::target).containsExactly(0L, 0L);
        assertThat(admin.resetOffsets("g", "jobs", OffsetResetSpec.toLatest(), false).partitions())
                .extracting(OffsetResetPlan.Row::target).containsExactly(10L, 10L);
    }

    @Test
    void retentionCanBeAlteredAndSurvivesARestart() {
        TopicDescription d = broker.alterTopic("jobs", 3_600_000, 1 << 30);
        assertThat(d.config().retentionMillis()).isEqualTo(3_600_000);
        assertThat(d.config().partitions()).isEqualTo(2);
        assertThatThrownBy(() -> broker.alterTopic("jobs", 0, -1)).isInstanceOf(SluiceException.InvalidConfigException.class);
        assertThatThrownBy(() -> broker.alterTopic("nope", -1, -1)).isInstanceOf(SluiceException.UnknownTopicException.class);
        broker.close();
        broker = Broker.open(BrokerConfig.builder(dir).clock(now::get).build());
        assertThat(broker.describeTopic("jobs").config().retentionBytes()).isEqualTo(1 << 30);
    }
}
