package io.sluice.core;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Group membership and committed offsets, shared by embedded consumers and the network broker's group APIs.
 * Thread-safe. A group consumes exactly one topic; its members split that topic's partitions (range assignment
 * over members sorted by id). Every join, leave or expiry starts a new generation; members learn their new
 * assignment from their next {@link #heartbeat}. Committed offsets survive restarts.
 */
public interface ConsumerGroups {

    /** A member's view of its group. */
    record Membership(String groupId, String memberId, int generation, Set<TopicPartition> assignment) {
    }

    /** A group's state, for describe/list tools. */
    record GroupDescription(String groupId, String topic, int generation, Map<String, Set<TopicPartition>> members,
                            Map<TopicPartition, Long> committed) {
    }

    /**
     * Joins (or rejoins, when {@code memberId} is known) the group for {@code topic}.
     *
     * @param memberId null to get a new member id
     * @throws SluiceException.UnknownTopicException if the topic does not exist
     * @throws SluiceException.InvalidConfigException if the group already consumes another topic
     */
    Membership join(String groupId, String topic, String memberId, String clientId, long sessionTimeoutMillis);

    /**
     * Keeps the member alive and returns its current assignment (which changes when the generation changes).
     *
     * @throws SluiceException with code {@link SluiceException.Code#UNKNOWN_MEMBER} if the member expired or left: rejoin
     */
    Membership heartbeat(String groupId, String memberId);

    /** Leaves at once, so the others take over its partitions without waiting for the session timeout. */
    void leave(String groupId, String memberId);

    /** Persists next-offsets (durable across a process crash once this returns). */
    void commit(String groupId, Map<TopicPartition, Long> offsets);

    OptionalLong committed(String groupId, TopicPartition partition);

    List<GroupDescription> describe();

    /** Every group with live members or committed offsets, sorted by id. */
    List<String> listGroups();

    /** One group's members, assignment and committed offsets; empty if the group has neither members nor offsets. */
    Optional<GroupDescription> describe(String groupId);

    /**
     * Replaces committed offsets of a group that has no live members: the one way committed offsets may move
     * backwards. Atomic with respect to joins: a member joining concurrently either sees the new offsets or makes
     * this call fail.
     *
     * @throws SluiceException.GroupNotEmptyException while the group has live members (as Kafka refuses
     *                                                {@code --reset-offsets} on an active group)
     */
    void resetOffsets(String groupId, Map<TopicPartition, Long> offsets);
}
