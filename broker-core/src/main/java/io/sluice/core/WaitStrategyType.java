package io.sluice.core;

/**
 * How the journal writer and subscribers wait for events (maps to the Disruptor wait strategies).
 * On a 2-core machine prefer {@link #SLEEPING} (default: near-zero idle CPU, microsecond wake-up) or
 * {@link #YIELDING} (lower latency, burns a core while idle). {@link #BUSY_SPIN} needs a core per thread.
 */
public enum WaitStrategyType {
    BLOCKING, SLEEPING, YIELDING, BUSY_SPIN
}
