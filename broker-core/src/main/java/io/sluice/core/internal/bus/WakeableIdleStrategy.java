package io.sluice.core.internal.bus;

import io.sluice.core.WaitStrategyType;
import org.agrona.concurrent.IdleStrategy;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.BooleanSupplier;
import java.util.concurrent.locks.LockSupport;

/**
 * How a shared stage thread ({@link StageAgent}) waits when a duty cycle found nothing to do: spin, then yield, then
 * (for {@link WaitStrategyType#SLEEPING} and {@link WaitStrategyType#BLOCKING}) park <em>without a timer</em> until
 * {@link #wake()}: microsecond hand-offs while events keep coming and no wake-up at all while its partitions are
 * idle. Agrona's own idle strategies park with a timeout, which is a wake-up per timeout per idle thread.
 *
 * <p>No lost wake-up: the thread publishes itself in {@code sleeper} (a volatile write) and then re-checks its work
 * ({@code hasWork}: reads of the sequences it follows, after a full fence) before parking; a waker advances such a
 * sequence (a volatile write or CAS) and then reads {@code sleeper}. One of the two sees the other's write. With
 * nobody parked, {@link #wake()} is one volatile read.
 *
 * <p>One unpark per parking: the waker that takes the thread out of {@code sleeper} (a CAS to null) unparks it; the
 * wakers after it read null. Without this, every publish between the unpark and the moment the woken thread ran
 * unparked it again (a mutex and a condition signal each, under the publisher's feet): a burst that found the
 * subscriber parked paid that on thousands of sends. The CAS may empty a later parking of the same thread (ABA):
 * it is then unparked once more than needed, never less.
 */
final class WakeableIdleStrategy implements IdleStrategy {
    /** Busy spins before yielding (the baselines' {@code WakingWaitStrategy}, in jmh-benchmarks, copies this ladder). */
    static final int SPINS = 100;
    /** Yields before parking. */
    static final int YIELDS = 20;

    private static final VarHandle SLEEPER;

    static {
        try {
            SLEEPER = MethodHandles.lookup().findVarHandle(SleeperThread.class, "thread", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /*
     * Every publish reads the parked thread, while the idle thread counts its idle cycles on every spin: each lives
     * alone on its cache line (padded through the class hierarchy, superclass fields being laid out first, as the
     * Disruptor pads its Sequence), and this object itself is never written after construction. Without this, a
     * publisher and a spinning stage thread fight over one cache line, and a 4-partition burst took twice as long.
     */
    @SuppressWarnings("unused")
    static class LeftPad {
        long p01, p02, p03, p04, p05, p06, p07, p08;
    }

    static class SleeperThread extends LeftPad {
        volatile Thread thread;
    }

    @SuppressWarnings("unused")
    static final class Sleeper extends SleeperThread {
        long p11, p12, p13, p14, p15, p16, p17, p18;
    }

    static class CyclesValue extends LeftPad {
        int cycles;
    }

    @SuppressWarnings("unused")
    static final class Cycles extends CyclesValue {
        long p11, p12, p13, p14, p15, p16, p17, p18;
    }

    private final int spins;
    private final int yields;
    private final boolean parks;
    private final BooleanSupplier hasWork;
    private final Sleeper sleeper = new Sleeper();
    private final Cycles idle = new Cycles();

    private WakeableIdleStrategy(int spins, int yields, boolean parks, BooleanSupplier hasWork) {
        this.spins = spins;
        this.yields = yields;
        this.parks = parks;
        this.hasWork = hasWork;
    }

    /**
     * @param hasWork called by the idle thread just before it parks: true if anything it serves is waiting
     */
    static WakeableIdleStrategy of(WaitStrategyType type, BooleanSupplier hasWork) {
        return switch (type) {
            case SLEEPING -> new WakeableIdleStrategy(SPINS, YIELDS, true, hasWork);
            case BLOCKING -> new WakeableIdleStrategy(0, 0, true, hasWork);
            case YIELDING -> new WakeableIdleStrategy(SPINS, Integer.MAX_VALUE, false, hasWork);
            case BUSY_SPIN -> new WakeableIdleStrategy(Integer.MAX_VALUE, 0, false, hasWork);
        };
    }

    @Override
    public void idle(int workCount) {
        if (workCount > 0) {
            if (idle.cycles != 0) {
                idle.cycles = 0;
            }
        } else {
            idle();
        }
    }

    @Override
    public void idle() {
        int cycles = idle.cycles;
        if (cycles < spins) {
            idle.cycles = cycles + 1;
            Thread.onSpinWait();
        } else if (cycles - spins < yields) {
            idle.cycles = cycles + 1;
            Thread.yield();
        } else if (parks) {
            park();
        } else {
            Thread.yield();
        }
    }

    private void park() {
        SLEEPER.setVolatile(sleeper, Thread.currentThread());
        VarHandle.fullFence(); // the sequences hasWork reads may be read with acquire only: order them after the store
        try {
            if (!hasWork.getAsBoolean()) {
                LockSupport.park(this);
            }
        } finally {
            SLEEPER.setVolatile(sleeper, (Thread) null);
        }
    }

    /** Unparks the thread if it is parked or about to park, unless another waker already did. Any thread. */
    void wake() {
        Thread t = (Thread) SLEEPER.getVolatile(sleeper);
        if (t != null && SLEEPER.compareAndSet(sleeper, t, (Thread) null)) {
            LockSupport.unpark(t);
        }
    }

    @Override
    public void reset() {
        idle.cycles = 0;
    }

    @Override
    public String alias() {
        return parks ? "spin-yield-park-until-woken" : spins == Integer.MAX_VALUE ? "busy-spin" : "spin-yield";
    }
}
