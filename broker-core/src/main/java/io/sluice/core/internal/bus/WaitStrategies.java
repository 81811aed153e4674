package io.sluice.core.internal.bus;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.YieldingWaitStrategy;
import io.sluice.core.WaitStrategyType;

/**
 * The Disruptor wait strategy for each {@link WaitStrategyType}, for the benchmarks' raw Disruptor baselines: they wait
 * as Sluice's stage threads do ({@link WakeableIdleStrategy}: the same spins, yields and timer-less park for
 * {@code SLEEPING}), so that a latency gap is the bus's, not the waiting's. Public, in an internal package, for them.
 */
public final class WaitStrategies {
    private WaitStrategies() {
    }

    /** A new strategy instance (strategies hold per-ring state: one per ring). */
    public static WaitStrategy create(WaitStrategyType type) {
        return switch (type) {
            case BLOCKING -> new BlockingWaitStrategy();
            case SLEEPING -> new WakingWaitStrategy();
            case YIELDING -> new YieldingWaitStrategy();
            case BUSY_SPIN -> new BusySpinWaitStrategy();
        };
    }
}
