package io.sluice.bench.internal;

import com.lmax.disruptor.WaitStrategy;
import io.sluice.core.WaitStrategyType;
import io.sluice.core.internal.bus.WaitStrategies;

/**
 * The wait strategy of the baseline rings: exactly the one Sluice's partition rings use for the same setting
 * ({@link WaitStrategies#create}), so a baseline and Sluice wait alike and a latency gap is the bus's, not the
 * waiting's. (Until issue 12 the baseline used Disruptor's {@code SleepingWaitStrategy(200, 100 µs)} for SLEEPING
 * while Sluice backed off from 1 µs: the two sides did not wait the same.)
 */
public final class DisruptorWait {
    private DisruptorWait() {
    }

    public static WaitStrategy of(WaitStrategyType type) {
        return WaitStrategies.create(type);
    }

    /** How the strategy waits, for the reports' notes. */
    public static String describe(WaitStrategyType type) {
        return switch (type) {
            case BLOCKING -> "BLOCKING (lock and condition)";
            case SLEEPING -> "SLEEPING (Sluice's backoff: spin, yield, then parks from 1 µs growing to 1 ms)";
            case YIELDING -> "YIELDING (spin then yield)";
            case BUSY_SPIN -> "BUSY_SPIN";
        };
    }
}
