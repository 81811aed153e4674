package io.sluice.core;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Group membership and committed offsets, shared by embedded consumers and the network broker's group APIs.
 * Thread-safe. A group consumes exactly one topic; its members split that topic's partitions (range assignment
 * over members sorted by id).
 *
 * <p><b>Generations (Kafka's eager protocol).</b> Every join, leave or session expiry starts a rebalance. During a
 * rebalance every member of the current generation learns of it from its next {@link #heartbeat} (a
 * {@link SluiceException.RebalanceInProgressException}), stops reading all its partitions and rejoins. The
 * generation is bumped, and partitions handed out again, only once every live member rejoined or its session
 * expired; so a partition is never owned by two members of one generation, and the new owner starts only after
 * the old one stopped. Every call carries the member id and the generation it was given: a stale generation is
 * refused ({@link SluiceException.IllegalGenerationException}), an unknown member too
 * ({@link SluiceException.UnknownMemberException}). Sessions expire on a timer of the coordinator, not only when
 * another member calls. A group whose last member left is dropped; its committed offsets stay.
 *
 * <p><b>Committed offsets</b> survive restarts (the file and its directory are fsync'ed before a commit returns)
 * and never go backwards ({@link SluiceException.OffsetRegressionException}) except through
 * {@link #resetOffsets} on a group without members.
 */
public interface ConsumerGroups {

    /** The generation of a member that has no assignment yet (new, or waiting for a rebalance to complete). */
    int NO_GENERATION = -1;

    /**
     * A member's view of its group.
     *
     * @param generation the generation this assignment belongs to, or {@link #NO_GENERATION} while the member waits
     *                   for a rebalance to complete (then the assignment is empty: rejoin until it is not)
     */
    record Membership(String groupId, String memberId, int generation, Set<TopicPartition> assignment) {
        /** True while the rebalance this member joined has not completed. */
        public boolean pending() {
            return generation == NO_GENERATION;
        }
    }

    /** A group's state, for describe/list tools. */
    record GroupDescription(String groupId, String topic, int generation, Map<String, Set<TopicPartition>> members,
                            Map<TopicPartition, Long> committed) {
    }

    /**
     * Joins the group for {@code topic} ({@code memberId} null: a new member), or rejoins during a rebalance.
     * Returns the member's assignment in the new generation, or a {@link Membership#pending()} membership while
     * other members have yet to rejoin: call again (each call keeps the session alive).
     *
     * @param memberId   null for a new member, else the id this member was given
     * @param generation the generation last given to this member ({@link #NO_GENERATION} if none)
     * @throws SluiceException.UnknownTopicException  if the topic does not exist
     * @throws SluiceException.InvalidConfigException if the group already consumes another topic
     * @throws SluiceException.UnknownMemberException if the group does not know {@code memberId} (join anew)
     * @throws SluiceException.FencedMemberException  if {@code generation} is not the one last given to that member
     */
    Membership join(String groupId, String topic, String memberId, int generation, String clientId, long sessionTimeoutMillis);

    /**
     * Keeps the member alive in its generation.
     *
     * @throws SluiceException.UnknownMemberException       if the member expired or left: join anew
     * @throws SluiceException.RebalanceInProgressException if a rebalance started: stop reading, rejoin
     * @throws SluiceException.IllegalGenerationException   if {@code generation} is not the current one: rejoin
     */
    Membership heartbeat(String groupId, String memberId, int generation);

    /** Leaves at once, so the others take over its partitions without waiting for the session timeout. */
    void leave(String groupId, String memberId);

    /**
     * Persists next-offsets (durable across an OS crash once this returns). A member commits partitions it owns
     * in {@code generation}, which must be the group's current generation (during a rebalance, the generation that
     * is ending: what the member processed before it stops). {@code memberId} null (with {@link #NO_GENERATION})
     * commits for a consumer outside the group's membership ({@code assign}), allowed only while the group has no
     * members. Every offset must be at or after the committed one.
     *
     * @throws SluiceException.GroupException (a subclass saying why) when refused; nothing is committed then
     */
    void commit(String groupId, String memberId, int generation, Map<TopicPartition, Long> offsets);

    /**
     * The committed next-offset of a partition, read by the member that owns it in {@code generation}
     * ({@code memberId} null: an unfenced read, as {@link #committed(String, TopicPartition)}).
     *
     * @throws SluiceException.GroupException when the member or generation is not current
     */
    OptionalLong committed(String groupId, String memberId, int generation, TopicPartition partition);

    /** The committed next-offset of a partition (an unfenced read, for tools and tests). */
    OptionalLong committed(String groupId, TopicPartition partition);

    /**
     * Sets committed offsets explicitly, backwards too (a user's seek; Kafka's {@code --reset-offsets}).
     *
     * @throws SluiceException.NonEmptyGroupException if the group has live members
     */
    void resetOffsets(String groupId, Map<TopicPartition, Long> offsets);

    List<GroupDescription> describe();
}
