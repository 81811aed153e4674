package io.sluice.net.client;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerGroups;
import io.sluice.core.OffsetReset;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.testkit.Await;
import io.sluice.testkit.FaultProxy;
import io.sluice.testkit.GroupHistory;
import io.sluice.net.client.internal.ClientConnection;
import io.sluice.net.client.internal.Connector;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.Groups;
import io.sluice.net.protocol.OffsetCommit;
import io.sluice.net.testing.TestBroker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Consumer groups with generations over the binary protocol (JOIN_GROUP, HEARTBEAT, OFFSET_COMMIT, OFFSET_FETCH v1). */
class RemoteGroupsTest {
    @TempDir
    Path dir;
    private TestBroker broker;
    private final TopicPartition p0 = new TopicPartition("g", 0);

    @BeforeEach
    void start() throws Exception {
        broker = TestBroker.start(dir);
        broker.broker.createTopic(TopicConfig.of("g", 4));
        try (Producer p = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 40; i++) {
                p.send(new ProducerRecord("g", i % 4, null, ("r" + i).getBytes(StandardCharsets.UTF_8), List.of(), -1));
            }
            p.flush();
        }
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    private ConsumerConfig config(String client) {
        return ConsumerConfig.builder().groupId("billing").clientId(client).offsetReset(OffsetReset.EARLIEST)
                .sessionTimeoutMillis(3_000).build();
    }

    @Test
    void aStaleGenerationCannotCommitOverTheNetwork() {
        try (Connector connector = new Connector(ClientConfig.builder(broker.bootstrap()).build(), "test")) {
            ClientConnection c = connector.connected();
            ConsumerGroups.Membership a = join(c, null, ConsumerGroups.NO_GENERATION, "a");
            assertThat(a.generation()).isEqualTo(1);
            commit(c, a.memberId(), 1, 3);

            ConsumerGroups.Membership b = join(c, null, ConsumerGroups.NO_GENERATION, "b");
            assertThat(b.pending()).isTrue();
            assertThatThrownBy(() -> c.call(ApiKey.HEARTBEAT, new Groups.HeartbeatRequest("billing", a.memberId(), 1)::encode,
                    in -> Groups.readMembership(in, "billing"), 5_000))
                    .isInstanceOf(SluiceException.RebalanceInProgressException.class);
            commit(c, a.memberId(), 1, 5); // the ending generation may still commit what it processed

            assertThat(join(c, a.memberId(), 1, "a").generation()).isEqualTo(2);
            assertThatThrownBy(() -> commit(c, a.memberId(), 1, 7))
                    .isInstanceOf(SluiceException.IllegalGenerationException.class);
            assertThatThrownBy(() -> join(c, a.memberId(), ConsumerGroups.NO_GENERATION, "impostor"))
                    .isInstanceOf(SluiceException.FencedMemberException.class);
            assertThatThrownBy(() -> join(c, "made-up", ConsumerGroups.NO_GENERATION, "x"))
                    .isInstanceOf(SluiceException.UnknownMemberException.class);
            assertThat(broker.broker.groups().committed("billing", p0)).hasValue(5);
        }
    }

    @Test
    void committedOffsetsNeverGoBackwardsOverTheNetwork() {
        try (Consumer a = new RemoteConsumer(broker.bootstrap(), config("a"))) {
            a.subscribe("g");
            a.commitSync(Map.of(p0, 8L));
            a.seek(p0, 2);
            assertThatThrownBy(a::commitSync).isInstanceOf(SluiceException.OffsetRegressionException.class);
            assertThat(a.committed(p0)).hasValue(8);
        }
        broker.broker.groups().resetOffsets("billing", Map.of(p0, 2L));
        try (Consumer again = new RemoteConsumer(broker.bootstrap(), config("again"))) {
            again.subscribe("g");
            assertThat(again.position(p0)).isEqualTo(2);
        }
    }

    @Test
    void theNewOwnerStartsOnlyAfterTheOldOwnerStoppedOverTheNetwork() {
        try (Consumer a = new RemoteConsumer(broker.bootstrap(), config("a"));
             Consumer b = new RemoteConsumer(broker.bootstrap(), config("b"))) {
            a.subscribe("g");
            assertThat(a.poll(Duration.ofSeconds(2))).isNotEmpty();
            b.subscribe("g");
            assertThat(b.assignment()).isEmpty(); // a has not stopped yet
            Await.until("a and b share the partitions", Duration.ofSeconds(20), () -> {
                a.poll(Duration.ofMillis(20));
                b.poll(Duration.ofMillis(20));
                return a.assignment().size() == 2 && b.assignment().size() == 2;
            });
            assertThat(a.assignment()).doesNotContainAnyElementsOf(b.assignment());
            assertThat(a.groupMembership().orElseThrow().generation()).isEqualTo(2);
            assertThat(b.groupMembership().orElseThrow().generation()).isEqualTo(2);
        }
    }

    @Test
    void aPartitionIsNeverOwnedByTwoMembersOfOneGenerationOverTheNetwork() throws Exception {
        long seed = System.nanoTime();
        System.out.println("RemoteGroupsTest seed " + seed);
        try (Producer p = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 1_200; i++) {
                p.send(new ProducerRecord("g", i % 4, null, ("h" + i).getBytes(StandardCharsets.UTF_8), List.of(), -1));
            }
            p.flush();
        }
        GroupHistory history = new GroupHistory();
        List<Throwable> failures = new ArrayList<>();
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < 3; w++) {
            Random random = new Random(seed + w);
            String name = "w" + w;
            workers.add(new Thread(() -> {
                try {
                    for (int round = 0; round < 3; round++) {
                        try (Consumer c = new RemoteConsumer(broker.bootstrap(), ConsumerConfig.builder().groupId("h")
                                .clientId(name).offsetReset(OffsetReset.EARLIEST).maxPollRecords(5).sessionTimeoutMillis(1_500).build())) {
                            c.subscribe("g");
                            int polls = 5 + random.nextInt(20);
                            for (int i = 0; i < polls; i++) {
                                history.pollAndRecord(c, Duration.ofMillis(20));
                            }
                        }
                    }
                } catch (Throwable t) {
                    synchronized (failures) {
                        failures.add(t);
                    }
                }
            }, "remote-history-" + name));
        }
        workers.forEach(Thread::start);
        for (Thread t : workers) {
            t.join(TimeUnit.MINUTES.toMillis(2));
        }
        assertThat(failures).isEmpty();
        Map<TopicPartition, Long> ends = new HashMap<>();
        for (TopicPartition tp : broker.broker.partitionsOf("g")) {
            ends.put(tp, broker.broker.endOffset(tp));
        }
        try (Consumer last = new RemoteConsumer(broker.bootstrap(), ConsumerConfig.builder().groupId("h").clientId("last")
                .offsetReset(OffsetReset.EARLIEST).sessionTimeoutMillis(1_500).build())) {
            last.subscribe("g");
            Await.until("the last member read to the end", Duration.ofSeconds(30), () -> {
                history.pollAndRecord(last, Duration.ofMillis(20));
                return last.assignment().size() == 4
                        && ends.entrySet().stream().allMatch(e -> last.position(e.getKey()) >= e.getValue());
            });
        }
        assertThat(history.check(ends)).isGreaterThan(2);
    }

    /**
     * The remote twin of the embedded consumer's expiry race (GroupHistoryTest under load): a member whose session
     * runs out between its JOIN_GROUP and the OFFSET_FETCH of its new partitions (which carries its member id and
     * generation) is refused with UNKNOWN_MEMBER. Provoked deterministically: every request reaches the broker 1.5 s
     * late through a proxy, longer than the 1 s session, so the lookup always arrives after the session ended. The
     * consumer must not fail {@code subscribe}: it takes nothing, joins again at the next poll, and then reads every
     * partition from its committed offset (else the earliest), each record once.
     */
    @Test
    void aSessionThatExpiresBetweenTheJoinAndTheOffsetLookupsIsJoinedAgainAtTheNextPollNotThrown() {
        broker.broker.groups().resetOffsets("late", Map.of(p0, 5L));
        try (FaultProxy proxy = FaultProxy.tcp("127.0.0.1", broker.server().port());
             Consumer c = new RemoteConsumer("127.0.0.1:" + proxy.port(), ConsumerConfig.builder().groupId("late").clientId("late")
                     .offsetReset(OffsetReset.EARLIEST).sessionTimeoutMillis(1_000).build())) {
            proxy.delayAll(Duration.ofMillis(1_500));
            c.subscribe("g"); // JOIN_GROUP arrives late, then OFFSET_FETCH 1.5 s after the session began: refused
            assertThat(c.assignment()).isEmpty();
            assertThat(c.groupMembership()).isEmpty();

            proxy.heal();
            Set<String> read = new HashSet<>();
            List<String> duplicates = new ArrayList<>();
            Map<TopicPartition, Long> first = new HashMap<>();
            Await.until("the member joined again and read all 35 records after the committed offsets", Duration.ofSeconds(60), () -> {
                for (var r : c.poll(Duration.ofMillis(100))) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    first.putIfAbsent(tp, r.offset());
                    if (!read.add(tp + "@" + r.offset())) {
                        duplicates.add(tp + "@" + r.offset());
                    }
                }
                return read.size() >= 35;
            });
            assertThat(c.assignment()).hasSize(4);
            assertThat(first.get(p0)).isEqualTo(5L); // from its committed offset
            assertThat(first).containsEntry(new TopicPartition("g", 1), 0L).containsEntry(new TopicPartition("g", 3), 0L);
            assertThat(read).hasSize(35);
            assertThat(duplicates).isEmpty();
        }
    }

    private static ConsumerGroups.Membership join(ClientConnection c, String memberId, int generation, String client) {
        return c.call(ApiKey.JOIN_GROUP, new Groups.JoinRequest("billing", "g", memberId, generation, client, 10_000)::encode,
                in -> Groups.readMembership(in, "billing"), 5_000);
    }

    private void commit(ClientConnection c, String memberId, int generation, long offset) {
        c.call(ApiKey.OFFSET_COMMIT, new OffsetCommit.Request("billing", memberId, generation, Map.of(p0, offset))::encode,
                in -> Boolean.TRUE, 5_000);
    }
}
