package io.sluice.core;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Reads events from partitions by dense offset. <b>Not thread-safe</b>: one thread polls a consumer, as in Kafka.
 *
 * <p>Either {@link #assign} partitions explicitly, or {@link #subscribe} to a topic with a
 * {@link ConsumerConfig#groupId()} so that the members of the group share its partitions. Delivery is
 * at-least-once: whatever was polled but not committed when a member leaves or crashes is delivered again.
 */
public interface Consumer extends AutoCloseable {

    /** Reads the given partitions without a group (positions start per {@link ConsumerConfig#offsetReset()}). */
    void assign(Set<TopicPartition> partitions);

    /** Joins the consumer group for this topic; partitions are (re)assigned as members come and go. */
    void subscribe(String topic);

    /** Partitions currently assigned to this consumer. */
    Set<TopicPartition> assignment();

    /** Moves to an explicit offset; the next poll returns the event at {@code offset} first. */
    void seek(TopicPartition partition, long offset);

    void seekToBeginning(Set<TopicPartition> partitions);

    void seekToEnd(Set<TopicPartition> partitions);

    /** Moves to the first event whose timestamp is {@code >= epochMillis} (or the end). */
    void seekToTimestamp(TopicPartition partition, long epochMillis);

    /** Offset of the next event to be returned for that partition. */
    long position(TopicPartition partition);

    /**
     * Returns up to {@link ConsumerConfig#maxPollRecords()} events, waiting up to {@code timeout} for the first.
     * In a group, also heartbeats and applies rebalances.
     */
    List<ConsumerRecord> poll(Duration timeout);

    /**
     * Commits the current positions of all assigned partitions (group consumers only), with this member's id and
     * generation.
     *
     * @throws SluiceException.GroupException if refused: a newer generation owns the partitions (its events will be
     *         delivered again to their new owner), or the commit would move an offset backwards
     */
    void commitSync();

    /** Commits explicit next-offsets (the offset of the next event to read); refused as {@link #commitSync()}. */
    void commitSync(Map<TopicPartition, Long> offsets);

    /**
     * Offsets skipped because retention removed them before this consumer read them (an {@link OffsetReset} other
     * than {@code NONE} applied; each skip is also logged). With {@code NONE} the poll throws
     * {@link SluiceException.OffsetOutOfRangeException} instead.
     */
    long skippedByRetention();

    /** This consumer's member id, generation and assignment while it holds one; empty outside a group or while rebalancing. */
    java.util.Optional<ConsumerGroups.Membership> groupMembership();

    /** The committed next-offset of the group for this partition, if any. */
    OptionalLong committed(TopicPartition partition);

    /** Leaves the group (triggering a rebalance) and releases the tailers. Does not commit. Safe to call twice. */
    @Override
    void close();
}
