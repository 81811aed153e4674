package io.sluice.core;

/**
 * How the journal writer and subscribers wait for events (Disruptor wait strategies). On a 2-core machine prefer
 * {@link #SLEEPING} (the default) or {@link #YIELDING} for the lowest latency when a core can be spared.
 */
public enum WaitStrategyType {
    /** Lock and condition: no CPU while idle, but every publish signals under a lock. */
    BLOCKING,
    /**
     * Spin, yield, then park without a timer until a producer's publish or the journal writer's progress wakes the
     * thread: no CPU at all while idle, lock-free publishing (a publish reads one counter; it unparks only when
     * someone sleeps). The default.
     */
    SLEEPING,
    /** Spin then {@code Thread.yield()}: lowest latency short of spinning; keeps a core busy while idle. */
    YIELDING,
    /** Pure spin: one dedicated core per journal writer and subscriber. */
    BUSY_SPIN
}
