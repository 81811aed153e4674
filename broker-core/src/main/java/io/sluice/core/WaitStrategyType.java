package io.sluice.core;

/**
 * How the journal writer and subscribers wait for events (Disruptor wait strategies). On a 2-core machine prefer
 * {@link #SLEEPING} (the default) or {@link #YIELDING} for the lowest latency when a core can be spared.
 */
public enum WaitStrategyType {
    /** Lock and condition: no CPU while idle, but every publish signals under a lock. */
    BLOCKING,
    /** Spin, yield, then park with backoff from 1 µs to 1 ms: ~0 CPU while idle, lock-free publishing. The default. */
    SLEEPING,
    /** Spin then {@code Thread.yield()}: lowest latency short of spinning; keeps a core busy while idle. */
    YIELDING,
    /** Pure spin: one dedicated core per journal writer and subscriber. */
    BUSY_SPIN
}
