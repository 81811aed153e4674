package io.sluice.bench.internal;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.YieldingWaitStrategy;
import io.sluice.core.WaitStrategyType;

/**
 * The raw Disruptor wait strategy matching Sluice's setting, so baseline rings wait exactly the same way (broker-core
 * maps SLEEPING to {@code SleepingWaitStrategy(200, 100_000)}: 200 spins/yields, then 100 µs parks).
 */
public final class DisruptorWait {
    private DisruptorWait() {
    }

    public static WaitStrategy of(WaitStrategyType type) {
        return switch (type) {
            case BLOCKING -> new BlockingWaitStrategy();
            case SLEEPING -> new SleepingWaitStrategy(200, 100_000);
            case YIELDING -> new YieldingWaitStrategy();
            case BUSY_SPIN -> new BusySpinWaitStrategy();
        };
    }
}
