package io.sluice.core.internal.bus;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.YieldingWaitStrategy;
import io.sluice.core.WaitStrategyType;

final class WaitStrategies {
    private WaitStrategies() {
    }

    static WaitStrategy create(WaitStrategyType type) {
        return switch (type) {
            case BLOCKING -> new BlockingWaitStrategy();
            // 200 spins/yields, then 100 µs parks: ~0 % CPU idle, tens of µs to wake.
            case SLEEPING -> new SleepingWaitStrategy(200, 100_000);
            case YIELDING -> new YieldingWaitStrategy();
            case BUSY_SPIN -> new BusySpinWaitStrategy();
        };
    }
}
