package io.sluice.core;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Consumer groups with client-side assignment — Kafka's classic group protocol (JoinGroup, SyncGroup, Heartbeat,
 * LeaveGroup, OffsetCommit, OffsetFetch, ListGroups, DescribeGroups) in plain Java types, for a protocol front such
 * as the Kafka listener to map its messages onto. The broker never reads the protocol metadata or the assignments:
 * they are opaque bytes chosen by the members (the leader computes the assignment). Thread-safe.
 *
 * <p>These groups live next to Sluice's own groups ({@link ConsumerGroups}): one namespace of group ids (a group id is
 * used by one kind at a time), one store of committed offsets, one rule for generations (stored durably before a
 * generation is handed out, so they never repeat across restarts). So a Kafka group shows in {@code sluice groups
 * list/describe}, in group lag on {@code /metrics} and on {@code /ui}.
 *
 * <p>States, as Kafka's: <b>Empty</b> (no members; the group object is then dropped, its offsets stay),
 * <b>PreparingRebalance</b> (a member joined, left or expired: every member must rejoin within the rebalance
 * timeout; {@link #join} is a long-poll completing when all have), <b>CompletingRebalance</b> (the generation is out;
 * {@link #sync} waits for the leader's assignment) and <b>Stable</b>.
 *
 * <p>The futures returned by {@link #join} and {@link #sync} complete on the coordinator's own thread (or the
 * caller's), under its monitor: their dependents must be cheap and never block — hand the response to the
 * connection's event loop.
 */
public interface ClassicGroups {

    /** Errors, numbered as Kafka's error codes so a protocol front passes {@link #code()} on. */
    enum Error {
        NONE(0),
        OFFSET_OUT_OF_RANGE(1),
        UNKNOWN_TOPIC_OR_PARTITION(3),
        COORDINATOR_NOT_AVAILABLE(15),
        ILLEGAL_GENERATION(22),
        INCONSISTENT_GROUP_PROTOCOL(23),
        INVALID_GROUP_ID(24),
        UNKNOWN_MEMBER_ID(25),
        INVALID_SESSION_TIMEOUT(26),
        REBALANCE_IN_PROGRESS(27),
        GROUP_ID_NOT_FOUND(69),
        MEMBER_ID_REQUIRED(79),
        GROUP_MAX_SIZE_REACHED(81);

        private final short code;

        Error(int code) {
            this.code = (short) code;
        }

        public short code() {
            return code;
        }
    }

    /** A protocol a member supports (for Kafka's consumers: an assignor name and the subscription bytes). */
    record Protocol(String name, byte[] metadata) {
    }

    /**
     * @param memberId             "" for a member that joins for the first time
     * @param groupInstanceId      Kafka's static membership id, or null; kept for describe only (members are dynamic)
     * @param requireKnownMemberId a first join is answered with {@link Error#MEMBER_ID_REQUIRED} and the id to join
     *                             with (JoinGroup v4+), so a client that loses the answer leaves no orphan member
     */
    record JoinRequest(String groupId, String memberId, String groupInstanceId, String protocolType,
                       List<Protocol> protocols, int sessionTimeoutMillis, int rebalanceTimeoutMillis, String clientId,
                       String clientHost, boolean requireKnownMemberId) {
    }

    /** One member's metadata for the chosen protocol, as the leader receives it. */
    record MemberMetadata(String memberId, String groupInstanceId, byte[] metadata) {
    }

    /**
     * @param members every member's metadata for the leader, empty for the others
     */
    record JoinResult(Error error, int generation, String protocolType, String protocolName, String leaderId,
                      String memberId, List<MemberMetadata> members) {
        public static JoinResult failed(Error error, String memberId) {
            return new JoinResult(error, -1, null, null, "", memberId, List.of());
        }
    }

    record SyncResult(Error error, String protocolType, String protocolName, byte[] assignment) {
        public static SyncResult failed(Error error) {
            return new SyncResult(error, null, null, new byte[0]);
        }
    }

    /** @param partitionErrors an entry per partition of the request */
    record CommitResult(Error error, Map<TopicPartition, Error> partitionErrors) {
    }

    /** @param protocolType "" for a group known only by its committed offsets (Kafka's "simple" group) */
    record Listing(String groupId, String protocolType, String state) {
    }

    record MemberDescription(String memberId, String groupInstanceId, String clientId, String clientHost,
                             byte[] metadata, byte[] assignment) {
    }

    /** @param state Empty, PreparingRebalance, CompletingRebalance, Stable, or Dead for a group that does not exist */
    record Description(String groupId, String state, String protocolType, String protocolName,
                       List<MemberDescription> members) {
    }

    /**
     * Joins (memberId "") or rejoins the group. Completes when the rebalance this join takes part in completes:
     * every member rejoined, or the rebalance timeout removed those that did not.
     */
    CompletableFuture<JoinResult> join(JoinRequest request);

    /**
     * The member's assignment for {@code generation}; the leader passes everyone's. Completes when the leader's
     * assignment is in.
     */
    CompletableFuture<SyncResult> sync(String groupId, int generation, String memberId, String protocolType,
                                       String protocolName, Map<String, byte[]> assignments);

    /** Keeps the member's session alive; {@link Error#REBALANCE_IN_PROGRESS} tells it to rejoin. */
    Error heartbeat(String groupId, int generation, String memberId);

    /** Removes members at once (their partitions go to the others without waiting for a session timeout). */
    List<Error> leave(String groupId, List<String> memberIds);

    /**
     * Commits next-offsets, durably. {@code generation} -1 with memberId "" is a consumer outside the membership
     * (Kafka's {@code assign()}), allowed while the group has no members. A member's commit may move an offset back
     * (the consumer seeked).
     */
    CommitResult commit(String groupId, int generation, String memberId, Map<TopicPartition, Long> offsets);

    /**
     * Committed next-offsets (-1 where none), for {@code partitions}, or every committed partition when null.
     */
    Map<TopicPartition, Long> committedOffsets(String groupId, Collection<TopicPartition> partitions);

    /** Every group (of either kind, or with committed offsets only), sorted by id. */
    List<Listing> groupListings();

    Description describeGroup(String groupId);
}
