package io.sluice.bench.internal;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.YieldingWaitStrategy;
import io.sluice.core.WaitStrategyType;

/**
 * The stock Disruptor wait strategy closest to Sluice's setting, for the baseline rings. For SLEEPING broker-core
 * uses its own backoff strategy (spin, yield, then parks growing from 1 µs to 1 ms); the baseline uses Disruptor's
 * {@code SleepingWaitStrategy(200, 100_000)} (200 spins/yields, then 100 µs parks) — the same shape with a fixed park.
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
