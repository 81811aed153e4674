package io.sluice.core.internal.bus;

import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.Sequence;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * One consumer of a partition ring, polled by whichever {@link StageAgent} it is assigned to: the partition's journal
 * writer, or one live subscriber. It is the poll-based twin of a Disruptor {@code BatchEventProcessor} driving an
 * ordinary {@link EventHandler}: a poll (a <em>turn</em>) hands over what is available, at most {@code maxBatch}
 * events, and the last event of a turn is the handler's end of batch. A handler failure is logged and the event
 * skipped, as a {@code BatchEventProcessor} with a logging exception handler does: one bad event must not stop the
 * partition, nor the other partitions sharing the thread.
 *
 * <p><b>A turn costs O(maxBatch), whatever the backlog.</b> The Disruptor's own {@code EventPoller} asks the sequencer
 * for the highest published sequence between the next one and the cursor, which on a multi-producer ring scans the
 * availability buffer over the whole backlog: with the turn cap, a 15,000-event burst was rescanned about 59 times
 * (quadratic in the backlog). Here the scan is bounded by the turn ({@code next + maxBatch - 1}) and the turn handles
 * everything the scan found, so each slot's availability flag is read once.
 *
 * <p><b>A turn reads no cursor.</b> Every claim on a multi-producer ring is a CAS of its cursor: a stage that read the
 * cursor on each turn while chasing the producers pulled that cache line away from them once per event, and each
 * claim then waited for it to come back (a core-to-core transfer, 80 to over 400 ns on this project's 2-vCPU machine:
 * docs/benchmarks.md item 26). The flags alone say which slots are published; only the check before parking
 * ({@link #hasWork}) reads the cursor, which the exact wake-up needs. A stage that follows
 * another stage (a journaled topic's subscriber behind the journal writer) reads no flag at all: everything up to the
 * stage it follows has been handled there, so it is published.
 *
 * <p><b>Run by a caller.</b> A stage built {@code callerRunnable} (the journal writer) may also be run by a
 * publishing thread on its own slot ({@link #tryHold}, {@link #pollHeld}, {@link #release}): whoever polls holds the
 * stage's flag, so the handler still has one thread at a time, each seeing the last one's writes (the flag's CAS and
 * volatile store order them). The agent's poll skips a held stage; the holder re-checks for work when it lets go.
 */
final class PolledStage {
    private static final Logger LOG = LoggerFactory.getLogger(PolledStage.class);

    private final String name;
    private final RingBuffer<RingSlot> ring;
    /** This stage's progress: the last sequence handled (moved to the ring's cursor when added as a gating sequence). */
    private final Sequence sequence = new Sequence();
    private final LongSupplier follows;
    private final boolean followsProducers;
    private final EventHandler<RingSlot> handler;
    private final int maxBatch;
    /** Slots a turn of a stage following the producers scans: {@code maxBatch}, at most one lap of the ring. */
    private final int turnSlots;
    private final Runnable onRemoved;
    /** Held by the thread polling a caller-runnable stage; null for the others. Held for good once removed. */
    private final AtomicBoolean held;

    /**
     * @param follows          the sequence this stage may not pass: the ring's cursor, or the journal writer's sequence
     * @param followsProducers true if {@code follows} is the ring's cursor (a multi-producer ring publishes out of
     *                         order below it, so each slot's availability is checked)
     * @param onRemoved        run on the agent's thread after the stage's last poll (the journal writer closes its appender)
     */
    PolledStage(String name, RingBuffer<RingSlot> ring, LongSupplier follows, boolean followsProducers,
                EventHandler<RingSlot> handler, int maxBatch, Runnable onRemoved) {
        this(name, ring, follows, followsProducers, handler, maxBatch, onRemoved, false);
    }

    /** @param callerRunnable true if a publisher may run this stage on its own thread ({@link #tryHold}) */
    PolledStage(String name, RingBuffer<RingSlot> ring, LongSupplier follows, boolean followsProducers,
                EventHandler<RingSlot> handler, int maxBatch, Runnable onRemoved, boolean callerRunnable) {
        if (maxBatch < 1) {
            throw new IllegalArgumentException(name + ": maxBatch must be at least 1, got " + maxBatch);
        }
        this.name = name;
        this.ring = ring;
        this.follows = follows;
        this.followsProducers = followsProducers;
        this.handler = handler;
        this.maxBatch = maxBatch;
        this.turnSlots = Math.min(maxBatch, ring.getBufferSize());
        this.onRemoved = onRemoved;
        this.held = callerRunnable ? new AtomicBoolean() : null;
    }

    /** This stage's progress: the last sequence it has handled. */
    Sequence sequence() {
        return sequence;
    }

    /**
     * Handles what is available (at most {@code maxBatch} events); returns how many. Agent thread only. A stage a
     * caller is running returns 0: the caller re-checks for work when it lets go ({@link #release}).
     */
    int poll() {
        if (held == null) {
            return pollUpTo(Long.MAX_VALUE);
        }
        if (!nextIsReady() || !held.compareAndSet(false, true)) {
            return 0;
        }
        try {
            return pollUpTo(Long.MAX_VALUE);
        } finally {
            held.set(false);
        }
    }

    /**
     * Takes the stage for the calling thread if nobody polls it: then {@link #pollHeld} may run it here, and
     * {@link #release} must follow. False for a stage that is not caller-runnable, is being polled, or was removed.
     */
    boolean tryHold() {
        return held != null && held.compareAndSet(false, true);
    }

    /** True while a thread polls this stage (a publish then needs to wake nobody: see {@link #release}). Any thread. */
    boolean isHeld() {
        return held != null && held.get();
    }

    /** Handles what is available up to {@code last} (at most {@code maxBatch} events); the holder only. */
    int pollHeld(long last) {
        return pollUpTo(last);
    }

    /**
     * Lets go of the stage and re-checks it: true if events wait for the agent, which the caller must then wake (a
     * publish that saw the stage held woke nobody). The store is volatile and a full fence orders the re-check's reads
     * after it; a publisher's claim (a CAS of the cursor) comes before its read of the flag, so either that publisher
     * saw the flag clear and woke the agent, or the re-check sees its claim.
     */
    boolean release() {
        held.set(false);
        VarHandle.fullFence();
        return hasWork();
    }

    private int pollUpTo(long bound) {
        long current = sequence.get();
        long next = current + 1;
        long last = followsProducers
                ? highestPublished(next, Math.min(next + turnSlots - 1, bound))
                : Math.min(Math.min(follows.getAsLong(), next + maxBatch - 1), bound);
        if (last < next) {
            return 0;
        }
        long handled = current;
        try {
            for (long s = next; s <= last; s++) {
                try {
                    handler.onEvent(ring.get(s), s, s == last);
                } catch (Throwable t) {
                    LOG.error("{}: unexpected failure at sequence {}; the event is skipped", name, s, t);
                }
                handled = s;
            }
        } finally {
            sequence.set(handled);
        }
        return (int) (handled - current);
    }

    /**
     * The highest sequence in {@code next..bound} up to which every slot is published ({@code next - 1} if none), from
     * the slots' availability flags alone. Slots past the last claim hold an earlier lap's flag and read as not
     * published, so no cursor read is needed to bound the scan.
     */
    private long highestPublished(long next, long bound) {
        long s = next;
        while (s <= bound && ring.isAvailable(s)) {
            s++;
        }
        return s - 1;
    }

    /**
     * True if the next event may be handled now: its slot is published (a stage following the producers), or the
     * stage it follows has passed it. A claimed but unpublished slot reads false: the agent polls again, and its check
     * before parking ({@link #hasWork}) reads the cursor, so no wake-up is lost.
     */
    private boolean nextIsReady() {
        long next = sequence.get() + 1;
        return followsProducers ? ring.isAvailable(next) : follows.getAsLong() >= next;
    }

    /**
     * True if an event waits for this stage's agent (the idle check before parking: {@link WakeableIdleStrategy}):
     * one is past the stage's sequence and no caller is running the stage. While a caller runs it, that caller
     * re-checks when it lets go ({@link #release}) and wakes the agent if anything is left; an agent that counted a
     * held stage's backlog as work would spin through its idle cycles, never parking, for as long as callers keep
     * taking turns (on a 2-core machine, stealing the CPU those callers need).
     */
    boolean hasWork() {
        return follows.getAsLong() > sequence.get() && (held == null || !held.get());
    }

    /** The agent's last word on this stage; a caller-runnable stage is held from here on, so no caller runs it again. */
    void removed() {
        if (held != null) {
            while (!held.compareAndSet(false, true)) {
                Thread.yield(); // a caller is journaling its one slot
            }
        }
        if (onRemoved != null) {
            onRemoved.run();
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
