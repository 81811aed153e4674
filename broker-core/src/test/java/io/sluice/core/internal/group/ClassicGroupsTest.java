package io.sluice.core.internal.group;

import io.sluice.core.ClassicGroups;
import io.sluice.core.ClassicGroups.Error;
import io.sluice.core.ClassicGroups.JoinRequest;
import io.sluice.core.ClassicGroups.JoinResult;
import io.sluice.core.ClassicGroups.Protocol;
import io.sluice.core.ClassicGroups.SyncResult;
import io.sluice.core.ConsumerGroups;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Kafka's classic group protocol on Sluice's coordinator, without a server: JoinGroup as a long-poll, the leader's
 * client-side assignment through SyncGroup, heartbeats that announce a rebalance, leaves, session and rebalance
 * timeouts, fencing of stale generations, and offsets shared with Sluice's own groups. Time is a manual clock: every
 * deadline here passes because the test moves the clock, never by sleeping.
 */
class ClassicGroupsTest {
    static final int SESSION = 10_000;
    static final int REBALANCE = 30_000;
    static final TopicPartition A0 = new TopicPartition("a", 0);
    static final TopicPartition A1 = new TopicPartition("a", 1);
    static final TopicPartition B0 = new TopicPartition("b", 0);

    @TempDir
    Path dir;
    final AtomicLong now = new AtomicLong(1_700_000_000_000L);
    GroupCoordinator coordinator;

    @BeforeEach
    void open() {
        coordinator = open(new ClassicGroupLimits(1_000, 60_000, 3, 100));
    }

    GroupCoordinator open(ClassicGroupLimits limits) {
        return new GroupCoordinator(dir, topic -> switch (topic) {
            case "a" -> Set.of(A0, A1);
            case "b" -> Set.of(B0);
            default -> throw new SluiceException.UnknownTopicException("unknown topic " + topic);
        }, now::get, limits);
    }

    @AfterEach
    void close() {
        coordinator.close();
    }

    // ------------------------------------------------------------------ join, sync, heartbeat

    @Test
    void aLoneMemberLeadsTheFirstGenerationAndGetsTheAssignmentItSyncs() {
        JoinResult a = coordinator.join(join("", "client-a")).join();

        assertThat(a.error()).isEqualTo(Error.NONE);
        assertThat(a.generation()).isEqualTo(1);
        assertThat(a.leaderId()).isEqualTo(a.memberId());
        assertThat(a.protocolName()).isEqualTo("range");
        assertThat(a.members()).extracting(ClassicGroups.MemberMetadata::memberId).containsExactly(a.memberId());
        assertThat(a.members().get(0).metadata()).isEqualTo(bytes("client-a"));

        byte[] assignment = assignment(Map.of("a", List.of(0, 1)));
        SyncResult s = coordinator.sync("g", 1, a.memberId(), "consumer", "range", Map.of(a.memberId(), assignment)).join();
        assertThat(s.error()).isEqualTo(Error.NONE);
        assertThat(s.assignment()).isEqualTo(assignment);
        assertThat(coordinator.heartbeat("g", 1, a.memberId())).isEqualTo(Error.NONE);
    }

    @Test
    void aFirstJoinThatRequiresAKnownMemberIdIsGivenOneToJoinWith() {
        JoinResult first = coordinator.join(join("", "client-a", true)).join();
        assertThat(first.error()).isEqualTo(Error.MEMBER_ID_REQUIRED);
        assertThat(first.memberId()).startsWith("client-a-");

        JoinResult joined = coordinator.join(join(first.memberId(), "client-a", true)).join();
        assertThat(joined.error()).isEqualTo(Error.NONE);
        assertThat(joined.memberId()).isEqualTo(first.memberId());
        assertThat(joined.generation()).isEqualTo(1);
    }

    @Test
    void aJoinWaitsUntilEveryKnownMemberRejoinedAndOnlyTheLeaderGetsTheMembersMetadata() {
        String a = stableGroupOf("client-a").memberId();

        CompletableFuture<JoinResult> bJoin = coordinator.join(join("", "client-b"));
        assertThat(bJoin).as("b waits for a to rejoin").isNotDone();
        assertThat(coordinator.heartbeat("g", 1, a)).isEqualTo(Error.REBALANCE_IN_PROGRESS);

        JoinResult aJoin = coordinator.join(join(a, "client-a")).join();
        JoinResult b = bJoin.join();
        assertThat(aJoin.generation()).isEqualTo(2);
        assertThat(b.generation()).isEqualTo(2);
        assertThat(aJoin.leaderId()).isEqualTo(a).isEqualTo(b.leaderId());
        assertThat(aJoin.members()).extracting(ClassicGroups.MemberMetadata::memberId).containsExactly(a, b.memberId());
        assertThat(b.members()).isEmpty();

        CompletableFuture<SyncResult> bSync = coordinator.sync("g", 2, b.memberId(), "consumer", "range", Map.of());
        assertThat(bSync).as("a follower waits for the leader's assignment").isNotDone();
        assertThat(coordinator.heartbeat("g", 2, b.memberId())).isEqualTo(Error.NONE);
        byte[] forA = assignment(Map.of("a", List.of(0)));
        byte[] forB = assignment(Map.of("a", List.of(1)));
        SyncResult aSync = coordinator.sync("g", 2, a, "consumer", "range", Map.of(a, forA, b.memberId(), forB)).join();
        assertThat(aSync.assignment()).isEqualTo(forA);
        assertThat(bSync.join().assignment()).isEqualTo(forB);
    }

    @Test
    void aRetriedJoinOfAStableFollowerGetsTheSameGenerationWithoutARebalance() {
        String a = stableGroupOf("client-a").memberId();
        JoinResult b = joinSecond(a, "client-b");
        sync(2, a, Map.of(a, assignment(Map.of("a", List.of(0))), b.memberId(), assignment(Map.of("a", List.of(1)))));

        JoinResult again = coordinator.join(join(b.memberId(), "client-b")).join();

        assertThat(again.error()).isEqualTo(Error.NONE);
        assertThat(again.generation()).isEqualTo(2);
        assertThat(coordinator.heartbeat("g", 2, a)).isEqualTo(Error.NONE);
    }

    @Test
    void aMemberThatDoesNotRejoinWithinTheRebalanceTimeoutIsRemovedAndTheOthersGoOn() {
        String a = stableGroupOf("client-a").memberId();
        JoinResult b = joinSecond(a, "client-b");
        sync(2, a, Map.of());

        CompletableFuture<JoinResult> cJoin = coordinator.join(join("", "client-c"));
        CompletableFuture<JoinResult> aJoin = coordinator.join(join(a, "client-a"));
        for (int i = 0; i < 5; i++) { // b keeps its session alive, is told to rejoin, and never does
            now.addAndGet(5_000);
            assertThat(coordinator.heartbeat("g", 2, b.memberId())).isEqualTo(Error.REBALANCE_IN_PROGRESS);
        }
        now.addAndGet(REBALANCE - 25_001);
        coordinator.expireSessions();
        assertThat(cJoin).as("the rebalance timeout has not passed").isNotDone();

        now.addAndGet(1);
        coordinator.expireSessions();

        assertThat(aJoin.join().generation()).isEqualTo(3);
        assertThat(aJoin.join().members()).extracting(ClassicGroups.MemberMetadata::memberId)
                .containsExactly(a, cJoin.join().memberId());
        assertThat(coordinator.heartbeat("g", 2, b.memberId())).isEqualTo(Error.UNKNOWN_MEMBER_ID);
    }

    @Test
    void aSilentMemberExpiresAfterItsSessionAndTheOthersAreToldToRejoin() {
        String a = stableGroupOf("client-a").memberId();
        JoinResult b = joinSecond(a, "client-b");
        sync(2, a, Map.of());
        coordinator.sync("g", 2, b.memberId(), "consumer", "range", Map.of()).join();

        for (int i = 0; i < 4; i++) { // a heartbeats every 2.5 s; b is silent for the whole session
            now.addAndGet(2_500);
            assertThat(coordinator.heartbeat("g", 2, a)).isEqualTo(Error.NONE);
        }
        now.addAndGet(1);
        coordinator.expireSessions();

        assertThat(coordinator.heartbeat("g", 2, a)).isEqualTo(Error.REBALANCE_IN_PROGRESS);
        assertThat(coordinator.heartbeat("g", 2, b.memberId())).isEqualTo(Error.UNKNOWN_MEMBER_ID);
        JoinResult alone = coordinator.join(join(a, "client-a")).join();
        assertThat(alone.generation()).isEqualTo(3);
        assertThat(alone.members()).extracting(ClassicGroups.MemberMetadata::memberId).containsExactly(a);
    }

    @Test
    void theMembersOfAGenerationWhoseLeaderNeverSyncsRejoinWithoutIt() {
        String a = stableGroupOf("client-a").memberId();
        JoinResult b = joinSecond(a, "client-b");
        CompletableFuture<SyncResult> bSync = coordinator.sync("g", 2, b.memberId(), "consumer", "range", Map.of());

        now.addAndGet(REBALANCE);
        coordinator.expireSessions();

        assertThat(bSync.join().error()).isEqualTo(Error.REBALANCE_IN_PROGRESS);
        JoinResult bAlone = coordinator.join(join(b.memberId(), "client-b")).join();
        assertThat(bAlone.generation()).isEqualTo(3);
        assertThat(bAlone.leaderId()).isEqualTo(b.memberId());
        assertThat(coordinator.heartbeat("g", 2, a)).isEqualTo(Error.UNKNOWN_MEMBER_ID);
    }

    @Test
    void staleGenerationsAndUnknownMembersAreFenced() {
        String a = stableGroupOf("client-a").memberId();
        JoinResult b = joinSecond(a, "client-b");
        sync(2, a, Map.of());

        assertThat(coordinator.heartbeat("g", 1, a)).isEqualTo(Error.ILLEGAL_GENERATION);
        assertThat(coordinator.sync("g", 1, b.memberId(), "consumer", "range", Map.of()).join().error())
                .isEqualTo(Error.ILLEGAL_GENERATION);
        assertThat(coordinator.commit("g", 1, a, Map.of(A0, 5L)).error()).isEqualTo(Error.ILLEGAL_GENERATION);
        assertThat(coordinator.heartbeat("g", 2, "somebody-else")).isEqualTo(Error.UNKNOWN_MEMBER_ID);
        assertThat(coordinator.join(join("somebody-else", "x")).join().error()).isEqualTo(Error.UNKNOWN_MEMBER_ID);
        assertThat(coordinator.heartbeat("other-group", 2, a)).isEqualTo(Error.UNKNOWN_MEMBER_ID);
        assertThat(coordinator.committed("g", A0)).isEmpty();
    }

    @Test
    void leaveTakesABatchOfMembersAndAnswersEachOne() {
        String a = stableGroupOf("client-a").memberId();
        JoinResult b = joinSecond(a, "client-b");
        sync(2, a, Map.of());

        assertThat(coordinator.leave("g", List.of(b.memberId(), "nobody"))).containsExactly(Error.NONE, Error.UNKNOWN_MEMBER_ID);
        assertThat(coordinator.heartbeat("g", 2, a)).isEqualTo(Error.REBALANCE_IN_PROGRESS);
        assertThat(coordinator.join(join(a, "client-a")).join().generation()).isEqualTo(3);

        assertThat(coordinator.leave("g", List.of(a))).containsExactly(Error.NONE);
        assertThat(coordinator.describeGroup("g").state()).isEqualTo("Dead");
    }

    @Test
    void aJoinWithAnotherProtocolTypeOrNoCommonProtocolIsRefused() {
        stableGroupOf("client-a");
        JoinRequest otherType = new JoinRequest("g", "", null, "connect", List.of(new Protocol("range", new byte[0])),
                SESSION, REBALANCE, "x", "/h", false);
        JoinRequest otherAssignor = new JoinRequest("g", "", null, "consumer", List.of(new Protocol("sticky", new byte[0])),
                SESSION, REBALANCE, "x", "/h", false);

        assertThat(coordinator.join(otherType).join().error()).isEqualTo(Error.INCONSISTENT_GROUP_PROTOCOL);
        assertThat(coordinator.join(otherAssignor).join().error()).isEqualTo(Error.INCONSISTENT_GROUP_PROTOCOL);
    }

    @Test
    void sluiceMembersAndKafkaMembersNeverShareAGroup() {
        stableGroupOf("client-a");
        assertThatThrownBy(() -> coordinator.join("g", "a", null, ConsumerGroups.NO_GENERATION, "sluice", SESSION))
                .isInstanceOf(SluiceException.InvalidConfigException.class);

        coordinator.join("native", "a", null, ConsumerGroups.NO_GENERATION, "sluice", SESSION);
        JoinRequest kafka = new JoinRequest("native", "", null, "consumer", List.of(new Protocol("range", new byte[0])),
                SESSION, REBALANCE, "x", "/h", false);
        assertThat(coordinator.join(kafka).join().error()).isEqualTo(Error.INCONSISTENT_GROUP_PROTOCOL);
        assertThat(coordinator.commit("native", -1, "", Map.of(A0, 1L)).error()).isEqualTo(Error.UNKNOWN_MEMBER_ID);
    }

    @Test
    void sessionTimeoutsOutsideTheBoundsAndMembersBeyondTheLimitAreRefused() {
        JoinRequest tooShort = new JoinRequest("g", "", null, "consumer", List.of(new Protocol("range", new byte[0])),
                999, REBALANCE, "x", "/h", false);
        assertThat(coordinator.join(tooShort).join().error()).isEqualTo(Error.INVALID_SESSION_TIMEOUT);

        String a = stableGroupOf("client-a").memberId();
        coordinator.join(join("", "client-b"));
        coordinator.join(join("", "client-c"));
        assertThat(coordinator.join(join("", "client-d")).join().error()).isEqualTo(Error.GROUP_MAX_SIZE_REACHED);
        assertThat(coordinator.join(join(a, "client-a")).join().members()).hasSize(3);
    }

    // ------------------------------------------------------------------ offsets

    @Test
    void aMemberCommitsInItsGenerationAndMayMoveAnOffsetBack() {
        String a = stableGroupOf("client-a").memberId();

        assertThat(coordinator.commit("g", 1, a, Map.of(A0, 10L, B0, 3L)).partitionErrors())
                .containsEntry(A0, Error.NONE).containsEntry(B0, Error.NONE);
        assertThat(coordinator.commit("g", 1, a, Map.of(A0, 4L)).error()).as("a seek back").isEqualTo(Error.NONE);

        assertThat(coordinator.committedOffsets("g", List.of(A0, A1, B0))).containsExactly(
                Map.entry(A0, 4L), Map.entry(A1, -1L), Map.entry(B0, 3L));
        assertThat(coordinator.committedOffsets("g", null)).containsOnlyKeys(A0, B0);
    }

    @Test
    void aCommitForAnUnknownPartitionIsRefusedForThatPartitionOnly() {
        String a = stableGroupOf("client-a").memberId();
        TopicPartition nowhere = new TopicPartition("nowhere", 0);

        ClassicGroups.CommitResult r = coordinator.commit("g", 1, a, Map.of(A0, 1L, nowhere, 1L, new TopicPartition("a", 7), 1L));

        assertThat(r.partitionErrors()).containsEntry(A0, Error.NONE).containsEntry(nowhere, Error.UNKNOWN_TOPIC_OR_PARTITION)
                .containsEntry(new TopicPartition("a", 7), Error.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(coordinator.committedOffsets("g", null)).containsOnlyKeys(A0);
    }

    @Test
    void aSimpleConsumerCommitsWithoutAGenerationOnlyWhileTheGroupHasNoMembers() {
        assertThat(coordinator.commit("g", -1, "", Map.of(A0, 7L)).error()).isEqualTo(Error.NONE);
        assertThat(coordinator.commit("g", -1, "", Map.of(A0, 2L)).error()).as("assign() seeks too").isEqualTo(Error.NONE);

        stableGroupOf("client-a");
        assertThat(coordinator.commit("g", -1, "", Map.of(A0, 9L)).error()).isEqualTo(Error.UNKNOWN_MEMBER_ID);
        assertThat(coordinator.committed("g", A0)).hasValue(2);
    }

    @Test
    void aCommitWhileTheLeaderHasNotSyncedIsToldToRejoin() {
        String a = stableGroupOf("client-a").memberId();
        JoinResult b = joinSecond(a, "client-b");

        assertThat(coordinator.commit("g", 2, b.memberId(), Map.of(A1, 1L)).error()).isEqualTo(Error.REBALANCE_IN_PROGRESS);
    }

    @Test
    void committedOffsetsAndGenerationsOutliveTheCoordinator() {
        String a = stableGroupOf("client-a").memberId();
        coordinator.commit("g", 1, a, Map.of(A0, 42L));
        coordinator.close();

        coordinator = open(ClassicGroupLimits.DEFAULT);
        assertThat(coordinator.committedOffsets("g", List.of(A0))).containsEntry(A0, 42L);
        JoinRequest r = new JoinRequest("g", "", null, "consumer", List.of(new Protocol("range", new byte[0])),
                SESSION, REBALANCE, "x", "/h", false);
        assertThat(coordinator.join(r).join().generation()).as("generations never repeat").isEqualTo(2);
    }

    // ------------------------------------------------------------------ Sluice's views

    @Test
    void sluiceToolsSeeAKafkaGroupsMembersWithThePartitionsTheirAssignmentsName() {
        String a = stableGroupOf("client-a").memberId();
        JoinResult b = joinSecond(a, "client-b");
        sync(2, a, Map.of(a, assignment(Map.of("a", List.of(0, 1))), b.memberId(), assignment(Map.of("b", List.of(0)))));
        coordinator.commit("g", 2, a, Map.of(A0, 5L));

        ConsumerGroups.GroupDescription d = coordinator.describe("g").orElseThrow();
        assertThat(d.generation()).isEqualTo(2);
        assertThat(d.topic()).as("two topics: no single one").isNull();
        assertThat(d.members()).containsEntry(a, Set.of(A0, A1)).containsEntry(b.memberId(), Set.of(B0));
        assertThat(d.committed()).containsEntry(A0, 5L);
        assertThat(coordinator.listGroups()).containsExactly("g");

        assertThat(coordinator.groupListings()).containsExactly(new ClassicGroups.Listing("g", "consumer", "Stable"));
        ClassicGroups.Description k = coordinator.describeGroup("g");
        assertThat(k.protocolName()).isEqualTo("range");
        assertThat(k.members()).extracting(ClassicGroups.MemberDescription::clientId).containsExactly("client-a", "client-b");
    }

    @Test
    void aKafkaGroupWithoutMembersKeepsItsOffsetsAndCannotBeResetWhileItHasThem() {
        String a = stableGroupOf("client-a").memberId();
        coordinator.commit("g", 1, a, Map.of(A0, 5L));
        assertThatThrownBy(() -> coordinator.resetOffsets("g", Map.of(A0, 0L)))
                .isInstanceOf(SluiceException.NonEmptyGroupException.class);

        coordinator.leave("g", List.of(a));

        assertThat(coordinator.groupListings()).containsExactly(new ClassicGroups.Listing("g", "", "Empty"));
        assertThat(coordinator.describe("g").orElseThrow().topic()).isEqualTo("a");
        coordinator.resetOffsets("g", Map.of(A0, 0L));
        assertThat(coordinator.committed("g", A0)).hasValue(0);
    }

    @Test
    void theConsumerProtocolsAssignmentDecodesToPartitionsAndGarbageToNone() {
        assertThat(ConsumerProtocolAssignment.partitions(assignment(Map.of("a", List.of(1, 0), "b", List.of(0)))))
                .containsExactly(A0, A1, B0);
        assertThat(ConsumerProtocolAssignment.partitions(new byte[]{0, 0, 0x7f, -1, -1, -1})).isEmpty();
        assertThat(ConsumerProtocolAssignment.partitions(new byte[0])).isEmpty();
    }

    // ------------------------------------------------------------------ helpers

    JoinResult stableGroupOf(String client) {
        JoinResult r = coordinator.join(join("", client)).join();
        assertThat(r.error()).isEqualTo(Error.NONE);
        sync(r.generation(), r.memberId(), Map.of());
        return r;
    }

    /** b joins a group whose only member is a; a rejoins; both are in the next generation (a leads). */
    JoinResult joinSecond(String a, String client) {
        CompletableFuture<JoinResult> b = coordinator.join(join("", client));
        coordinator.join(join(a, "client-a")).join();
        return b.join();
    }

    void sync(int generation, String leader, Map<String, byte[]> assignments) {
        assertThat(coordinator.sync("g", generation, leader, "consumer", "range", assignments).join().error()).isEqualTo(Error.NONE);
    }

    static JoinRequest join(String memberId, String client) {
        return join(memberId, client, false);
    }

    static JoinRequest join(String memberId, String client, boolean requireKnownMemberId) {
        return new JoinRequest("g", memberId, null, "consumer", List.of(new Protocol("range", bytes(client))),
                SESSION, REBALANCE, client, "/127.0.0.1", requireKnownMemberId);
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** A consumer protocol assignment (version 0), as Kafka's ConsumerProtocol writes it. */
    static byte[] assignment(Map<String, List<Integer>> partitions) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeShort(0);
            out.writeInt(partitions.size());
            for (Map.Entry<String, List<Integer>> e : new LinkedHashMap<>(partitions).entrySet()) {
                out.writeShort(e.getKey().length());
                out.write(bytes(e.getKey()));
                out.writeInt(e.getValue().size());
                for (int p : new TreeSet<>(e.getValue())) {
                    out.writeInt(p);
                }
            }
            out.writeInt(-1); // no user data
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
