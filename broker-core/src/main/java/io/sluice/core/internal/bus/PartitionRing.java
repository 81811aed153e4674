package io.sluice.core.internal.bus;

import com.lmax.disruptor.InsufficientCapacityException;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.Sequence;
import io.sluice.core.Acks;
import io.sluice.core.EventSubscriber;
import io.sluice.core.Header;
import io.sluice.core.Producer;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.journal.PartitionJournal;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * One partition's bus: a multi-producer Disruptor ring whose first consumer is the journal writer (for journaled
 * topics) and whose live subscribers run after it in the dependency graph:
 *
 * <pre>
 *   producers ──claim/publish──► ring ──► journal writer ──► subscriber × N
 * </pre>
 *
 * A slot holds one event ({@link #tryPublish}) or one producer's record batch ({@link #tryPublishBatch}, whose bytes
 * wait in the bounded {@link BatchBuffers}). Producers never block here: a full ring (or batch memory) is
 * {@link Producer#BACK_PRESSURED}.
 *
 * <p>The journal writer and the subscribers are {@link PolledStage}s run by the broker's shared threads
 * ({@link StageAgents}: {@code journal.threads} and {@code subscriber.threads}), not threads of their own: a publish
 * wakes the journal writer's thread, the journal writer's progress wakes the subscribers' threads ({@link Wakers}).
 */
public final class PartitionRing implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionRing.class);
    private static final long DRAIN_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** Events the journal writer handles before publishing its progress (and before a SYNC group commit). */
    static final int JOURNAL_MAX_BATCH = 256;
    /** Events a subscriber handles before its thread polls the next stage. */
    static final int SUBSCRIBER_MAX_BATCH = 256;
    /**
     * Slots a caller holding the journal writer journals on its own thread in one go ({@link #journalHeldAndRelease}),
     * its own included; fewer than {@link #JOURNAL_MAX_BATCH}, so one turn.
     */
    public static final int CALLER_MAX_SLOTS = 64;
    /**
     * Sluice's own latency histograms (publish→journal, journal→subscriber) sample the events whose ring sequence has
     * these bits clear, one in 64 (and every producer batch): a clock read on the publisher and a histogram update on
     * each stage per event cost more than the hand-off they measure (docs/benchmarks.md, issue 22).
     */
    static final long LATENCY_SAMPLE_MASK = 63;

    private final TopicPartition partition;
    private final RingBuffer<RingSlot> ring;
    /** Woken by every publish: the journal writer's agent, or (memory-only) the subscribers' agents. */
    private final Wakers onPublish = new Wakers();
    /** Woken by the journal writer's progress: the subscribers' agents (journaled topics). */
    private final Wakers onJournaled = new Wakers();
    private final PartitionJournal journal;
    private final JournalHandler journalHandler;
    private final PolledStage journalStage;
    private final StageAgent journalAgent;
    /** Where subscribers run: the subscriber threads, or (null: {@code subscriber.threads = 0}) the journal threads. */
    private final StageAgents subscriberAgents;
    private final StageAgents journalAgents;
    private final SingleWriterRecorder publishToJournal = new SingleWriterRecorder(3);
    private final List<SubscriberStage> subscribers = new CopyOnWriteArrayList<>();
    private final LongAdder backPressured = new LongAdder();
    /** Events beyond one per slot carried by batch slots, so {@link #published()} counts events. */
    private final LongAdder batchedEvents = new LongAdder();
    private final BatchBuffers batchBuffers = new BatchBuffers();
    private final Histogram closedJournalToSubscriber = new Histogram(3);
    private volatile boolean accepting = true;
    private boolean closed;
    /** Set at the end of {@link #close()}: {@link #awaitCompleted} stops waiting. */
    private volatile boolean drained;

    /**
     * @param journal          null for a memory-only topic (no journal stage; subscribers follow the producers directly)
     * @param journalAgents    the threads journal writers share (unused without a journal)
     * @param subscriberAgents the threads live subscribers share; null to run them on the journal threads: a journaled
     *                         partition's subscribers on its journal writer's thread, right after it in each duty
     *                         cycle (no hand-off between threads), a memory-only partition's on the least loaded one
     */
    public PartitionRing(TopicPartition partition, int ringSize, PartitionJournal journal, StageAgents journalAgents,
                         StageAgents subscriberAgents) {
        this.partition = partition;
        this.journal = journal;
        this.subscriberAgents = subscriberAgents;
        this.journalAgents = journalAgents;
        this.ring = RingBuffer.createMultiProducer(RingSlot::new, ringSize, onPublish);
        if (journal != null) {
            journalHandler = new JournalHandler(journal, ring, publishToJournal, onJournaled);
            // The journal's sequence (what subscribers and close() wait on) only moves at the end of a poll: cap the
            // batch so a burst reaches subscribers in steps instead of all at once after the whole burst is written.
            journalStage = new PolledStage("journal " + partition, ring, ring::getCursor, true, journalHandler,
                    JOURNAL_MAX_BATCH, journalHandler::onShutdown, true);
            onPublish.skipWhileHeld(journalStage);
            journalHandler.setSequenceCallback(journalStage.sequence());
            ring.addGatingSequences(journalStage.sequence());
            journalAgent = journalAgents.assign(journalStage);
            onPublish.add(journalAgent);
        } else {
            journalHandler = null;
            journalStage = null;
            journalAgent = null;
        }
    }

    public TopicPartition partition() {
        return partition;
    }

    public PartitionJournal journal() {
        return journal;
    }

    /**
     * Claims a slot, copies the event in and publishes it. Never blocks.
     *
     * @return {@link Producer#ACCEPTED}, {@link Producer#BACK_PRESSURED} or {@link Producer#CLOSED}
     */
    public long tryPublish(byte[] key, byte[] value, List<Header> headers, long timestamp, Acks acks, SendCallback callback) {
        if (!accepting) {
            return Producer.CLOSED;
        }
        final long sequence;
        try {
            sequence = ring.tryNext();
        } catch (InsufficientCapacityException e) {
            backPressured.increment();
            return Producer.BACK_PRESSURED;
        }
        RingSlot slot = ring.get(sequence);
        // Re-check after claiming: close() flips "accepting" and then reads the cursor, so a claim that still saw
        // accepting == true is below that cursor and gets drained, and a later claim is published as cancelled.
        // This keeps close() exact without any per-send counter.
        boolean open = accepting;
        try {
            if (open) {
                slot.fill(partition.topic(), partition.partition(), key, value, headers, timestamp,
                        acks, acks == Acks.MEMORY ? null : callback);
                if ((sequence & LATENCY_SAMPLE_MASK) == 0) {
                    slot.publishNanos = System.nanoTime();
                }
            } else {
                slot.cancel();
            }
        } finally {
            ring.publish(sequence);
        }
        return published(open, acks, callback);
    }

    /** After a slot was published: CLOSED if it went out cancelled; a MEMORY send is acknowledged here, at once. */
    private long published(boolean open, Acks acks, SendCallback callback) {
        if (!open) {
            return Producer.CLOSED;
        }
        if (acks == Acks.MEMORY && callback != null) {
            callback.onCompletion(partition.partition(), -1, null);
        }
        return Producer.ACCEPTED;
    }

    /**
     * Publishes a record batch of {@code count} events (RecordBatch v2, docs/journal-format.md, checked by the caller)
     * as one slot: the journal writer stores its bytes as one document with only the base offset rewritten, and the
     * callback gets the base offset (event {@code i} has offset {@code base + i}). The bytes
     * {@code batch[offset, offset + length)} are copied before this returns. Never blocks.
     *
     * @return {@link Producer#ACCEPTED}, {@link Producer#BACK_PRESSURED} (ring full, or the partition's batch memory,
     *         {@link BatchBuffers}, in use) or {@link Producer#CLOSED}
     */
    public long tryPublishBatch(ByteBuffer batch, int offset, int length, int count, Acks acks, SendCallback callback) {
        return tryPublishBatch(batch, offset, length, count, acks, callback, false);
    }

    /**
     * {@link #tryPublishBatch(ByteBuffer, int, int, int, Acks, SendCallback)}, and with {@code journalHere} an
     * {@link Acks#JOURNAL} batch that finds no thread polling the partition's journal writer is journaled on the
     * calling thread, with what waits ahead of it and what was published meanwhile ({@link #journalWaiting}): unless
     * more than {@link #CALLER_MAX_SLOTS} or a SYNC send waited ahead, it is in the mapped file and its callback has
     * run when this returns, and no thread was woken. This is for a network front's event loop, which answers the
     * request from the callback on its own thread: the round trip crosses no journal thread (two hand-offs fewer).
     * Otherwise, and always for {@link Acks#SYNC} (its msync is the journal thread's group commit), the batch goes to
     * the journal writer as usual. The journal keeps one writer at a time ({@link PolledStage#tryHold}) and the ring's
     * order.
     */
    public long tryPublishBatch(ByteBuffer batch, int offset, int length, int count, Acks acks, SendCallback callback,
                                boolean journalHere) {
        if (count < 1) {
            throw new IllegalArgumentException("a record batch holds at least one event, got " + count);
        }
        if (!accepting) {
            return Producer.CLOSED;
        }
        if (journalHere && acks == Acks.JOURNAL && tryHoldJournal()) {
            long sequence = Producer.CLOSED;
            try {
                sequence = publishBatch(batch, offset, length, count, acks, callback);
            } finally {
                journalHeldAndRelease();
            }
            return sequence >= 0 ? Producer.ACCEPTED : sequence;
        }
        long sequence = publishBatch(batch, offset, length, count, acks, callback);
        return sequence >= 0 ? published(true, acks, callback) : sequence;
    }

    /**
     * Takes this partition's journal writer for the calling thread if no thread polls it (journaled partitions only):
     * until {@link #journalHeldAndRelease()}, which must follow, publishes wake nobody and the journal thread leaves
     * the partition alone. Any thread; never blocks.
     */
    public boolean tryHoldJournal() {
        return journalStage != null && journalStage.tryHold();
    }

    /**
     * The holder journals on its own thread what waits in the ring ({@link #journalWaiting}), lets go of the journal
     * writer, and wakes the journal thread if anything is left (a publish that found the writer held woke nobody).
     */
    public void journalHeldAndRelease() {
        try {
            journalWaiting();
        } finally {
            if (journalStage.release()) {
                journalAgent.wake();
            }
        }
    }

    /**
     * The journal writer's holder journals, in one turn, the slots published next in the ring: its own and those of
     * anyone who published meanwhile, at most {@link #CALLER_MAX_SLOTS}, stopping before a SYNC send (its msync is
     * the journal thread's group commit). Single events of the turn share one document, as on the journal thread.
     * Another sender's callback runs here too (a network front's hops to its own event loop when this is not it).
     */
    private void journalWaiting() {
        long next = journalStage.sequence().get() + 1;
        long cursor = ring.getCursor();
        long last = next - 1;
        while (last - next + 1 < CALLER_MAX_SLOTS && last < cursor && ring.isAvailable(last + 1)) {
            RingSlot slot = ring.get(last + 1);
            if (!slot.cancelled && slot.acks == Acks.SYNC) {
                break;
            }
            last++;
        }
        if (last >= next) {
            journalStage.pollHeld(last);
        }
    }

    /**
     * Claims a slot, copies the batch into the partition's batch memory and publishes it.
     *
     * @return the slot's sequence, or {@link Producer#BACK_PRESSURED} or {@link Producer#CLOSED} (both negative)
     */
    private long publishBatch(ByteBuffer batch, int offset, int length, int count, Acks acks, SendCallback callback) {
        synchronized (batchBuffers) {
            int index = batchBuffers.acquire(length, ring.getMinimumGatingSequence());
            if (index < 0) {
                backPressured.increment();
                return Producer.BACK_PRESSURED;
            }
            final long sequence;
            try {
                sequence = ring.tryNext();
            } catch (InsufficientCapacityException e) {
                batchBuffers.unuse(index);
                backPressured.increment();
                return Producer.BACK_PRESSURED;
            }
            RingSlot slot = ring.get(sequence);
            boolean open = accepting; // see tryPublish
            try {
                if (open) {
                    batchBuffers.use(index, sequence);
                    batch.get(offset, batchBuffers.buffer(index), 0, length);
                    slot.fillBatch(partition.topic(), partition.partition(), batchBuffers, index, length, count,
                            acks, acks == Acks.MEMORY ? null : callback);
                    slot.publishNanos = System.nanoTime();
                    batchedEvents.add(count - 1);
                } else {
                    batchBuffers.unuse(index);
                    slot.cancel();
                }
            } finally {
                ring.publish(sequence);
            }
            return open ? sequence : Producer.CLOSED;
        }
    }

    /** Adds a live subscriber after the journal stage; it sees events published from now on. */
    public SubscriberStage subscribe(String name, EventSubscriber subscriber) {
        if (!accepting) {
            throw new SluiceException.ClosedException(partition + " is closed");
        }
        SubscriberStage stage = new SubscriberStage(name, subscriber);
        subscribers.add(stage);
        return stage;
    }

    /** A subscriber's stage on this ring, run by one of the broker's subscriber threads. */
    public final class SubscriberStage implements AutoCloseable {
        private final SubscriberHandler handler;
        private final PolledStage stage;
        private final StageAgent agent;
        private final Wakers wakers;
        private final SingleWriterRecorder latency = new SingleWriterRecorder(3);
        private boolean closed;

        private SubscriberStage(String name, EventSubscriber subscriber) {
            handler = new SubscriberHandler(name, subscriber, latency, journal != null);
            LongSupplier follows = journalStage != null ? journalStage.sequence()::get : ring::getCursor;
            stage = new PolledStage("subscriber " + name + " on " + partition, ring, follows, journalStage == null,
                    handler, SUBSCRIBER_MAX_BATCH, null);
            // addGatingSequences moves the new sequence to the cursor: the subscriber starts with the next event
            ring.addGatingSequences(stage.sequence());
            wakers = journalStage != null ? onJournaled : onPublish;
            if (subscriberAgents != null) {
                agent = subscriberAgents.assign(stage);
            } else if (journalAgent != null) {
                agent = journalAgent; // polled after the journal writer in each of its duty cycles
                agent.add(stage);
            } else {
                agent = journalAgents.assign(stage);
            }
            // also the journal writer's own thread when it runs this subscriber: a publisher may have journaled the
            // batch on its own thread (tryPublishBatch), and waking a running thread is one volatile read
            wakers.add(agent);
        }

        public long delivered() {
            return handler.delivered();
        }

        void drainInto(Histogram target) {
            target.add(latency.getIntervalHistogram());
        }

        /** Stops delivering to the subscriber and releases the ring from its sequence. Safe to call twice. */
        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            handler.stop();
            agent.remove(stage);
            wakers.remove(agent);
            ring.removeGatingSequence(stage.sequence());
            subscribers.remove(this);
            synchronized (closedJournalToSubscriber) {
                drainInto(closedJournalToSubscriber);
            }
        }

        Sequence sequence() {
            return stage.sequence();
        }
    }

    // ----- metrics (any thread) -----

    /** Events published since this ring was created (a batch slot counts its events). */
    public long published() {
        return ring.getCursor() + 1 + batchedEvents.sum();
    }

    public long journaled() {
        return journalHandler == null ? 0 : journalHandler.journaled();
    }

    public long journalErrors() {
        return journalHandler == null ? 0 : journalHandler.errors();
    }

    public long backPressured() {
        return backPressured.sum();
    }

    public int capacity() {
        return ring.getBufferSize();
    }

    /**
     * Waits until every event claimed before the call is journaled (synced where asked) and its sender's callback has
     * run: the journal stage moves its sequence only after the callbacks of a batch ({@link JournalHandler}). Returns
     * at once on a memory-only ring (its sends complete as they are published), and when {@link #close()} has
     * finished (it told the senders of whatever it could not journal) or {@code giveUp} says so. Any thread.
     */
    public void awaitCompleted(BooleanSupplier giveUp) {
        if (journalStage != null) {
            awaitSequence(journalStage.sequence(), ring.getCursor(), () -> drained || giveUp.getAsBoolean());
        }
    }

    public long occupancy() {
        return Math.max(0, ring.getCursor() - ring.getMinimumGatingSequence());
    }

    /** Adds the latency recorded since the last call into the given histograms. Metrics thread only. */
    public void drainLatencies(Histogram publishToJournalTarget, Histogram journalToSubscriberTarget) {
        publishToJournalTarget.add(publishToJournal.getIntervalHistogram());
        for (SubscriberStage s : subscribers) {
            s.drainInto(journalToSubscriberTarget);
        }
        synchronized (closedJournalToSubscriber) {
            journalToSubscriberTarget.add(closedJournalToSubscriber);
            closedJournalToSubscriber.reset();
        }
    }

    /**
     * Stops accepting, waits until every accepted event is journaled and delivered to the subscribers (bounded),
     * stops the threads, and fails the callbacks of anything that could not be journaled. Safe to call twice.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        accepting = false;
        long deadline = System.nanoTime() + DRAIN_TIMEOUT_NANOS;
        BooleanSupplier expired = () -> System.nanoTime() >= deadline;
        long cursor = ring.getCursor(); // read after accepting=false: see tryPublish
        if (journalStage != null) {
            awaitSequence(journalStage.sequence(), cursor, expired);
        }
        for (SubscriberStage s : subscribers) {
            awaitSequence(s.sequence(), cursor, expired);
            s.close();
        }
        if (journalStage != null) {
            journalAgent.remove(journalStage); // the appender is closed on the thread that used it
            onPublish.remove(journalAgent);
            long done = journalStage.sequence().get();
            if (done < cursor) {
                LOG.error("{}: {} accepted events could not be journaled before close; their senders are told",
                        partition, cursor - done);
                SluiceException closed = new SluiceException.ClosedException(partition + " closed before the event was journaled");
                for (long s = done + 1; s <= cursor; s++) {
                    SendCallback cb = ring.get(s).takeCallback();
                    if (cb != null) {
                        cb.onCompletion(partition.partition(), -1, closed);
                    }
                }
            }
        }
        drained = true;
    }

    private static void awaitSequence(Sequence sequence, long target, BooleanSupplier giveUp) {
        long park = 1_000;
        while (sequence.get() < target && !giveUp.getAsBoolean()) {
            LockSupport.parkNanos(park);
            park = Math.min(park * 2, 1_000_000);
        }
    }
}
