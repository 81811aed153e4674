package io.sluice.core.internal.bus;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.YieldingWaitStrategy;
import io.sluice.core.WaitStrategyType;

/**
 * The Disruptor wait strategy behind each {@link WaitStrategyType}. Public (in an internal package) so that the
 * benchmarks' raw Disruptor baselines wait exactly as Sluice's rings do: a baseline that parked longer or shorter
 * than Sluice would measure the wait strategy, not the bus.
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
