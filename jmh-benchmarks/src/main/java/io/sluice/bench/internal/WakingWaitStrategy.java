package io.sluice.bench.internal;

import com.lmax.disruptor.AlertException;
import com.lmax.disruptor.Sequence;
import com.lmax.disruptor.SequenceBarrier;
import com.lmax.disruptor.WaitStrategy;

import java.lang.invoke.VarHandle;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The raw-Disruptor baselines' twin of Sluice's {@code WakeableIdleStrategy} (broker-core's {@code internal.bus}; the
 * same spin and yield counts, checked by bench-harness's {@code WakingWaitStrategyLadderTest}): spin,
 * then yield, then park <em>without a timer</em> until woken: microsecond hand-offs while events keep coming
 * and no wake-up at all while a partition is idle. Who wakes a parked waiter:
 * <ul>
 *   <li>the ring's producers: the Disruptor calls {@link #signalAllWhenBlocking} after every publish (the journal
 *       writer and memory-only subscribers wait on the ring's cursor);</li>
 *   <li>the journal writer after it publishes its progress at the end of each batch
 *       (subscribers of a journaled topic wait on the journal writer's sequence);</li>
 *   <li>{@code halt()}: the barrier's alert signals too.</li>
 * </ul>
 * When nobody is parked a signal is one volatile read (after a fence on a single-producer ring, below), so publishing
 * stays lock-free.
 *
 * <p>No lost wake-up: a waiter increments {@code sleepers} (a full fence) and then re-reads the sequence it waits for
 * before parking; a signaller advances that sequence and then reads {@code sleepers}, with a full fence between the
 * two. One of the two then sees the other's write. A multi-producer ring's claim is a CAS of its cursor (a full fence
 * before the publish); a single-producer ring's publish is a release store of its cursor, which the read of
 * {@code sleepers} after it may pass (x86 lets a load overtake an earlier store, and the JMM allows it), so the
 * waiter could park after missing the publish and the signaller skip it: a lost wake-up, and no timer ends the park.
 * A strategy for such a ring ({@code fenceBeforeSignal}) fences first, as the Disruptor's own waking strategies do
 * ({@code BlockingWaitStrategy} signals under a lock). Until issue 22 the baselines' single-producer rings did not:
 * their publish was about a third cheaper than it can be when waking is exact (docs/benchmarks.md, item 19).
 */
final class WakingWaitStrategy implements WaitStrategy {
    /** {@code WakeableIdleStrategy.SPINS}: busy spins before yielding. */
    static final int SPINS = 100;
    /** {@code WakeableIdleStrategy.YIELDS}: yields before parking. */
    static final int YIELDS = 20;

    private final AtomicInteger sleepers = new AtomicInteger();
    private final Set<Thread> parked = ConcurrentHashMap.newKeySet();
    private final boolean fenceBeforeSignal;

    /**
     * @param fenceBeforeSignal true for a ring whose publish is not itself a full fence (a single-producer ring): each
     *                          signal fences before it reads {@code sleepers}
     */
    WakingWaitStrategy(boolean fenceBeforeSignal) {
        this.fenceBeforeSignal = fenceBeforeSignal;
    }

    @Override
    public long waitFor(long sequence, Sequence cursor, Sequence dependentSequence, SequenceBarrier barrier)
            throws AlertException {
        long available;
        int idle = 0;
        while ((available = dependentSequence.get()) < sequence) {
            barrier.checkAlert();
            if (idle < SPINS) {
                idle++;
                Thread.onSpinWait();
            } else if (idle < SPINS + YIELDS) {
                idle++;
                Thread.yield();
            } else {
                park(sequence, dependentSequence, barrier);
            }
        }
        return available;
    }

    private void park(long sequence, Sequence dependentSequence, SequenceBarrier barrier) {
        Thread me = Thread.currentThread();
        parked.add(me);
        sleepers.incrementAndGet();
        try {
            if (dependentSequence.get() < sequence && !barrier.isAlerted()) {
                LockSupport.park(this);
            }
        } finally {
            sleepers.decrementAndGet();
            parked.remove(me);
        }
    }

    @Override
    public void signalAllWhenBlocking() {
        if (fenceBeforeSignal) {
            VarHandle.fullFence();
        }
        if (sleepers.get() != 0) {
            for (Thread t : parked) {
                LockSupport.unpark(t);
            }
        }
    }
}
