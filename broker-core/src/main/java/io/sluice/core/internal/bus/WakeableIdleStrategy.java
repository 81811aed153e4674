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
 * ({@code hasWork}: reads of the sequences it follows, after a full fence) before parking; a waker advances such a sequence (a
 * volatile write or CAS) and then reads {@code sleeper}. With volatile accesses totally ordered, one of the two sees
 * the other's write. With nobody parked, {@link #wake()} is one volatile read.
 */
final class WakeableIdleStrategy implements IdleStrategy {
    /** Busy spins before yielding (the same ladder as {@link WakingWaitStrategy}, the baselines' strategy). */
    static final int SPINS = 100;
    /** Yields before parking. */
    static final int YIELDS = 20;

    private static final VarHandle SLEEPER;

    static {
        try {
            SLEEPER = MethodHandles.lookup().findVarHandle(WakeableIdleStrategy.class, "sleeper", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int spins;
    private final int yields;
    private final boolean parks;
    private final BooleanSupplier hasWork;
    @SuppressWarnings("unused") // through SLEEPER
    private volatile Thread sleeper;
    private int idleCycles;

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
            idleCycles = 0;
        } else {
            idle();
        }
    }

    @Override
    public void idle() {
        if (idleCycles < spins) {
            idleCycles++;
            Thread.onSpinWait();
        } else if (idleCycles - spins < yields) {
            idleCycles++;
            Thread.yield();
        } else if (parks) {
            park();
        } else {
            Thread.yield();
        }
    }

    private void park() {
        SLEEPER.setVolatile(this, Thread.currentThread());
        VarHandle.fullFence(); // the sequences hasWork reads may be read with acquire only: order them after the store
        try {
            if (!hasWork.getAsBoolean()) {
                LockSupport.park(this);
            }
        } finally {
            SLEEPER.setVolatile(this, (Thread) null);
        }
    }

    /** Unparks the thread if it is parked or about to park. Any thread. */
    void wake() {
        Thread t = (Thread) SLEEPER.getVolatile(this);
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    @Override
    public void reset() {
        idleCycles = 0;
    }

    @Override
    public String alias() {
        return parks ? "spin-yield-park-until-woken" : spins == Integer.MAX_VALUE ? "busy-spin" : "spin-yield";
    }
}
