package io.sluice.core.internal;

import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.PartitionReader;
import io.sluice.core.Producer;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.bus.PartitionRing;
import io.sluice.records.CheckedBatch;
import io.sluice.records.RecordBatchChecker;

import java.util.Collection;

/**
 * What a network front (broker-net's servers, a Kafka-protocol listener) needs of an embedded broker beyond the
 * embedding API {@link Broker}: appending a producer's record batch as it came, copying stored batches out, and being
 * woken when a partition grows. Not API: an application embedding Sluice never needs it, and it may change with the
 * servers. Get it with {@link #of(Broker)}.
 *
 * <p>The contract between a front and the journal is in the types: {@link #tryAppendBatch} takes only a
 * {@link CheckedBatch}, which only {@link RecordBatchChecker#checkProduced} creates, because readers trust what the
 * journal stores (framing, CRC32C, every record's lengths, sizes within {@code maxEventSize}).
 */
public interface BrokerFront {

    /**
     * The front of an embedded broker: the one accessor.
     *
     * @throws IllegalArgumentException for a {@link Broker} that is not broker-core's own (a test double, say)
     */
    static BrokerFront of(Broker broker) {
        if (broker instanceof BrokerFront front) {
            return front;
        }
        throw new IllegalArgumentException("not an embedded Sluice broker: " + broker.getClass().getName());
    }

    /**
     * Appends a producer's record batch as one unit: one ring slot, one journal document holding the batch's bytes
     * unchanged but its base offset. The bytes are copied before this returns. Never blocks.
     *
     * <p>An {@link Acks#JOURNAL} batch that finds the partition's journal writer idle is journaled on the calling
     * thread ({@link BrokerConfig#journalCallerAppends()}, on by default): its callback has then run, on this thread,
     * before this returns, so a front answers from the callback without a hop.
     *
     * @param callback told once, with the batch's base offset (record {@code i} has {@code base + i}; -1 for
     *                 {@link Acks#MEMORY}) when the batch reached {@code acks}, or with the error; on the calling
     *                 thread (before this returns) or on a journal thread
     * @return {@link Producer#ACCEPTED}, {@link Producer#BACK_PRESSURED} (the partition's ring or its batch memory
     *         is full: nothing was taken, retry later) or {@link Producer#CLOSED}
     * @throws SluiceException.UnknownTopicException for an unknown topic; {@link SluiceException.InvalidConfigException}
     *         for a partition the topic does not have, or acks other than MEMORY on a memory-only topic
     */
    long tryAppendBatch(TopicPartition partition, CheckedBatch batch, Acks acks, SendCallback callback);

    /**
     * Runs {@code sends} (this thread's {@link Acks#JOURNAL} sends to {@code topic}, through a {@link Producer}) and
     * journals them on this thread: the journal writers of the topic's partitions that no thread polls are held while
     * the sends publish (so they wake nobody), then each journals what waits in it, as a front's batch does in
     * {@link #tryAppendBatch}. The sends' callbacks have then run, here, before this returns, except on a partition
     * whose writer was busy (or behind more than a turn of events, or a SYNC send): those are journaled by the journal
     * threads as usual. Only with {@link BrokerConfig#journalCallerAppends()}, on a journaled topic of at most
     * {@link #MAX_PARTITIONS_HELD} partitions (each is taken and let go); otherwise it just runs {@code sends}. For at
     * most {@link #MAX_SENDS_JOURNALED_HERE} sends: a held writer journals no more than that, and the rest would wait
     * in the ring for the release instead of being journaled as they come.
     */
    void sendJournalingHere(String topic, Runnable sends);

    /** Partitions {@link #sendJournalingHere} takes at most: a topic with more is left to the journal threads. */
    int MAX_PARTITIONS_HELD = 16;

    /** Sends worth making inside {@link #sendJournalingHere}: what a held journal writer journals at once. */
    int MAX_SENDS_JOURNALED_HERE = PartitionRing.CALLER_MAX_SLOTS;

    /**
     * A fetch cursor over one partition, positioned at its start offset: {@link Broker#openReader}, declared here too so
     * that a front's reads go through the one object it is given (and a test can put a failing front in its place).
     */
    PartitionReader openReader(TopicPartition partition);

    /**
     * Calls {@code wake} once, on the thread that appended it (a journal writer's, or a front's that journaled its
     * own batch), after the next batch appended to any of
     * {@code partitions} — how a reader waits for data without polling on a timer. {@code wake} must be cheap and
     * never block (hand the work to the reader's own thread). Register, then re-check {@link Broker#endOffset}: an
     * append that happened before the registration is seen by the re-check, any later one calls {@code wake}.
     *
     * @return cancels the wake-up if it has not run yet (idempotent, any thread)
     */
    Runnable onNextAppend(Collection<TopicPartition> partitions, Runnable wake);
}
