package io.sluice.core;

import io.sluice.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Consumer groups with generations, embedded: fencing of stale members, the eager hand-over, monotonic commits,
 * expiry by the coordinator's timer. The concurrent history check is in {@link GroupHistoryTest}.
 */
class GroupGenerationsTest {
    @TempDir
    Path dir;
    Broker broker;
    /** a manual clock: session expiry is driven by the test, never by sleeping */
    final AtomicLong now = new AtomicLong(1_700_000_000_000L);
    final TopicPartition p0 = new TopicPartition("jobs", 0);

    @BeforeEach
    void open() throws Exception {
        broker = Broker.open(BrokerConfig.builder(dir).clock(now::get).build());
        broker.createTopic(TopicConfig.of("jobs", 4));
        try (Producer p = broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 40; i++) {
                p.send(ProducerRecord.of("jobs", null, "job-" + i).withPartition(i % 4)).get(10, TimeUnit.SECONDS);
            }
        }
    }

    @AfterEach
    void close() {
        broker.close();
    }

    ConsumerConfig member(String client) {
        return ConsumerConfig.builder().groupId("workers").clientId(client).offsetReset(OffsetReset.EARLIEST)
                .sessionTimeoutMillis(5_000).build();
    }

    @Test
    void aStaleGenerationCannotCommit() {
        ConsumerGroups groups = broker.groups();
        ConsumerGroups.Membership a = groups.join("workers", "jobs", null, ConsumerGroups.NO_GENERATION, "a", 5_000);
        assertThat(a.generation()).isEqualTo(1);
        assertThat(a.assignment()).contains(p0);
        groups.commit("workers", a.memberId(), 1, Map.of(p0, 3L));

        // b joins: a rebalance starts; a's generation is ending but still current, so what a processed can commit
        ConsumerGroups.Membership b = groups.join("workers", "jobs", null, ConsumerGroups.NO_GENERATION, "b", 5_000);
        assertThat(b.pending()).isTrue();
        assertThatThrownBy(() -> groups.heartbeat("workers", a.memberId(), 1))
                .isInstanceOf(SluiceException.RebalanceInProgressException.class);
        groups.commit("workers", a.memberId(), 1, Map.of(p0, 5L));

        // a stops and rejoins: generation 2 starts; a's late commit with generation 1 is refused
        ConsumerGroups.Membership a2 = groups.join("workers", "jobs", a.memberId(), 1, "a", 5_000);
        assertThat(a2.generation()).isEqualTo(2);
        assertThatThrownBy(() -> groups.commit("workers", a.memberId(), 1, Map.of(p0, 7L)))
                .isInstanceOf(SluiceException.IllegalGenerationException.class)
                .extracting(e -> ((SluiceException) e).code()).isEqualTo(SluiceException.Code.ILLEGAL_GENERATION);
        // nor may a commit a partition it does not own in generation 2, nor read its committed offset
        TopicPartition notMine = new TopicPartition("jobs", a2.assignment().contains(p0) ? 3 : 0);
        assertThatThrownBy(() -> groups.commit("workers", a.memberId(), 2, Map.of(notMine, 7L)))
                .isInstanceOf(SluiceException.IllegalGenerationException.class);
        assertThatThrownBy(() -> groups.committed("workers", a.memberId(), 1, p0))
                .isInstanceOf(SluiceException.IllegalGenerationException.class);
        // a commit without a member id is refused while the group has members
        assertThatThrownBy(() -> groups.commit("workers", null, ConsumerGroups.NO_GENERATION, Map.of(p0, 9L)))
                .isInstanceOf(SluiceException.IllegalGenerationException.class);
        assertThat(groups.committed("workers", p0)).hasValue(5);
    }

    @Test
    void joinRefusesAnUnknownMemberIdAndAStaleIncarnation() {
        ConsumerGroups groups = broker.groups();
        assertThatThrownBy(() -> groups.join("workers", "jobs", "made-up", ConsumerGroups.NO_GENERATION, "x", 5_000))
                .isInstanceOf(SluiceException.UnknownMemberException.class);
        ConsumerGroups.Membership a = groups.join("workers", "jobs", null, ConsumerGroups.NO_GENERATION, "a", 5_000);
        // a second process presenting a's id without a's generation does not take over a's membership
        assertThatThrownBy(() -> groups.join("workers", "jobs", a.memberId(), ConsumerGroups.NO_GENERATION, "a", 5_000))
                .isInstanceOf(SluiceException.FencedMemberException.class)
                .extracting(e -> ((SluiceException) e).code()).isEqualTo(SluiceException.Code.FENCED_MEMBER);
        assertThat(groups.heartbeat("workers", a.memberId(), a.generation())).isEqualTo(a);
        assertThatThrownBy(() -> groups.heartbeat("workers", a.memberId(), a.generation() + 1))
                .isInstanceOf(SluiceException.IllegalGenerationException.class);
    }

    @Test
    void theNewOwnerStartsOnlyAfterTheOldOwnerStopped() {
        Consumer a = broker.newConsumer(member("a"));
        a.subscribe("jobs");
        assertThat(a.poll(Duration.ofSeconds(1))).isNotEmpty();
        assertThat(a.assignment()).hasSize(4);

        Consumer b = broker.newConsumer(member("b"));
        b.subscribe("jobs");
        // a has not heard of b yet: it still owns all four partitions, so b gets none and reads nothing
        assertThat(b.assignment()).isEmpty();
        assertThat(b.poll(Duration.ofMillis(50))).isEmpty();
        assertThat(b.groupMembership()).isEmpty();

        a.poll(Duration.ZERO); // a learns of the rebalance, drops everything, rejoins: generation 2 starts
        b.poll(Duration.ZERO);
        assertThat(a.groupMembership().orElseThrow().generation()).isEqualTo(2);
        assertThat(b.groupMembership().orElseThrow().generation()).isEqualTo(2);
        assertThat(a.assignment()).hasSize(2).doesNotContainAnyElementsOf(b.assignment());
        assertThat(b.assignment()).hasSize(2);
        a.close();
        b.close();
    }

    @Test
    void committedOffsetsNeverGoBackwards() {
        try (Consumer a = broker.newConsumer(member("a"))) {
            a.subscribe("jobs");
            a.commitSync(Map.of(p0, 8L));
            a.seek(p0, 2);
            assertThatThrownBy(a::commitSync).isInstanceOf(SluiceException.OffsetRegressionException.class)
                    .extracting(e -> ((SluiceException) e).code()).isEqualTo(SluiceException.Code.OFFSET_REGRESSION);
            assertThat(a.committed(p0)).hasValue(8);
            // moving it back is an explicit reset, refused while the group has members
            assertThatThrownBy(() -> broker.groups().resetOffsets("workers", Map.of(p0, 2L)))
                    .isInstanceOf(SluiceException.NonEmptyGroupException.class);
        }
        broker.groups().resetOffsets("workers", Map.of(p0, 2L));
        assertThat(broker.groups().committed("workers", p0)).hasValue(2);
        try (Consumer again = broker.newConsumer(member("again"))) {
            again.subscribe("jobs");
            assertThat(again.position(p0)).isEqualTo(2);
        }
    }

    @Test
    void aSilentMemberIsExpiredByTheCoordinatorsTimer() {
        Consumer a = broker.newConsumer(member("a"));
        a.subscribe("jobs");
        Consumer b = broker.newConsumer(member("b"));
        b.subscribe("jobs");
        a.poll(Duration.ZERO);
        b.poll(Duration.ZERO);
        assertThat(groupMembers()).hasSize(2);
        // a keeps polling; b goes silent. Nobody calls the coordinator, yet b's session ends on time
        now.addAndGet(3_000);
        a.poll(Duration.ZERO);
        now.addAndGet(3_000);
        Await.until("b expired by the timer", Duration.ofSeconds(10), () -> groupMembers().size() == 1);
        a.poll(Duration.ZERO); // a rejoins, alone: the whole topic
        assertThat(a.assignment()).hasSize(4);
        assertThatThrownBy(b::commitSync).isInstanceOf(SluiceException.UnknownMemberException.class);
        b.close();
        a.close();
    }

    @Test
    void anEmptyGroupIsDroppedAndItsCommittedOffsetsStay() {
        try (Consumer a = broker.newConsumer(member("a"))) {
            a.subscribe("jobs");
            a.commitSync(Map.of(p0, 4L));
        }
        ConsumerGroups.GroupDescription d = broker.groups().describe().stream()
                .filter(g -> g.groupId().equals("workers")).findFirst().orElseThrow();
        assertThat(d.topic()).isNull(); // no live group
        assertThat(d.members()).isEmpty();
        assertThat(d.committed()).containsEntry(p0, 4L);
        // so the group may now consume another topic
        broker.createTopic(TopicConfig.of("other", 1));
        try (Consumer c = broker.newConsumer(member("c"))) {
            c.subscribe("other");
            assertThat(c.assignment()).containsExactly(new TopicPartition("other", 0));
        }
    }

    @Test
    void aZombieMemberCannotCommitAfterItsSessionExpired() {
        Consumer zombie = broker.newConsumer(member("zombie"));
        zombie.subscribe("jobs");
        assertThat(zombie.poll(Duration.ofSeconds(1))).isNotEmpty();
        Map<TopicPartition, Long> progress = new HashMap<>();
        for (TopicPartition tp : zombie.assignment()) {
            progress.put(tp, zombie.position(tp));
        }
        now.addAndGet(6_000); // a long GC pause: the session expires
        Consumer heir = broker.newConsumer(member("heir"));
        heir.subscribe("jobs");
        assertThat(heir.assignment()).hasSize(4);
        List<ConsumerRecord> all = new ArrayList<>();
        List<ConsumerRecord> batch;
        while (!(batch = heir.poll(Duration.ofMillis(100))).isEmpty()) {
            all.addAll(batch);
        }
        assertThat(all).hasSize(40);
        heir.commitSync();
        // the zombie wakes up and commits what it had read: refused, the heir's commit stands
        assertThatThrownBy(() -> zombie.commitSync(progress)).isInstanceOf(SluiceException.GroupException.class);
        for (TopicPartition tp : heir.assignment()) {
            assertThat(broker.groups().committed("workers", tp)).hasValue(10);
        }
        zombie.close();
        heir.close();
    }

    @Test
    void generationsNeverRepeatNotAcrossAnEmptyGroupNorAcrossABrokerRestart() {
        ConsumerGroups groups = broker.groups();
        ConsumerGroups.Membership a = groups.join("workers", "jobs", null, ConsumerGroups.NO_GENERATION, "a", 5_000);
        assertThat(a.generation()).isEqualTo(1);
        groups.leave("workers", a.memberId());
        // the group emptied and was dropped; it comes back one generation on
        ConsumerGroups.Membership b = groups.join("workers", "jobs", null, ConsumerGroups.NO_GENERATION, "b", 5_000);
        assertThat(b.generation()).isEqualTo(2);

        // the broker restarts (members are not kept): a member of the earlier lifetime holds generation 2, so the
        // restarted broker hands out 3 — the same (generation, partition) never has two owners
        broker.close();
        broker = Broker.open(BrokerConfig.builder(dir).clock(now::get).build());
        ConsumerGroups.Membership c = broker.groups().join("workers", "jobs", null, ConsumerGroups.NO_GENERATION, "c", 5_000);
        assertThat(c.generation()).isEqualTo(3);
        assertThatThrownBy(() -> broker.groups().commit("workers", b.memberId(), 2, Map.of(p0, 1L)))
                .isInstanceOf(SluiceException.GroupException.class);
        assertThat(broker.groups().committed("workers", p0)).isEmpty();
    }

    private Map<String, Set<TopicPartition>> groupMembers() {
        return broker.groups().describe().stream().filter(g -> g.groupId().equals("workers"))
                .findFirst().map(ConsumerGroups.GroupDescription::members).orElse(Map.of());
    }
}
