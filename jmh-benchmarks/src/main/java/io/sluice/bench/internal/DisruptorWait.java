package io.sluice.bench.internal;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.YieldingWaitStrategy;
import io.sluice.core.WaitStrategyType;

/**
 * The wait strategy of the baseline rings: the Disruptor twin of how Sluice's shared
 * journal and subscriber threads idle for the same setting (same spins, yields and timer-less park for SLEEPING), so
 * a baseline and Sluice wait alike and a latency gap is the bus's, not the waiting's. (Until issue 12 the baseline
 * used Disruptor's {@code SleepingWaitStrategy(200, 100 µs)} for SLEEPING while Sluice backed off from 1 µs: the two
 * sides did not wait the same.)
 */
public final class DisruptorWait {
    private DisruptorWait() {
    }

    /**
     * A new strategy instance (strategies hold per-ring state: one per ring). Until issue 21 this switch was
     * broker-core's public {@code WaitStrategies}, a library class only the baselines used.
     *
     * @param multiProducer whether the ring's claim is a CAS of its cursor (multi-producer) or a plain store (single):
     *                      a waking strategy on a single-producer ring fences before each signal ({@link WakingWaitStrategy})
     */
    public static WaitStrategy of(WaitStrategyType type, boolean multiProducer) {
        return switch (type) {
            case BLOCKING -> new BlockingWaitStrategy();
            case SLEEPING -> new WakingWaitStrategy(!multiProducer);
            case YIELDING -> new YieldingWaitStrategy();
            case BUSY_SPIN -> new BusySpinWaitStrategy();
        };
    }

    /** How the strategy waits, for the reports' notes. */
    public static String describe(WaitStrategyType type) {
        return switch (type) {
            case BLOCKING -> "BLOCKING (Sluice: park until woken; baseline: lock and condition)";
            case SLEEPING -> "SLEEPING (spin 100, yield 20, then park without a timer until a publish wakes the thread)";
            case YIELDING -> "YIELDING (spin then yield)";
            case BUSY_SPIN -> "BUSY_SPIN";
        };
    }
}
