package io.sluice.bench.internal;

import java.util.concurrent.locks.LockSupport;

/**
 * Paces a publisher at a fixed rate and gives each event its <em>intended</em> send time, so that latency measured
 * from it is corrected for coordinated omission: a stall delays every later send, and that delay is counted.
 * Waits by parking while far from the next slot and yielding close to it (this machine has 2 cores: a spinning
 * publisher would steal the consumer's core).
 */
public final class Pacer {
    private static final long PARK_THRESHOLD_NANOS = 120_000;
    private static final long PARK_MARGIN_NANOS = 80_000;

    private final long startNanos;
    private final double periodNanos;

    public Pacer(long startNanos, double eventsPerSecond) {
        if (!(eventsPerSecond > 0)) {
            throw new IllegalArgumentException("rate must be > 0, got " + eventsPerSecond);
        }
        this.startNanos = startNanos;
        this.periodNanos = 1e9 / eventsPerSecond;
    }

    /** When event {@code i} should be sent. */
    public long intendedNanos(long i) {
        return startNanos + (long) (i * periodNanos);
    }

    /** Waits until event {@code i}'s intended time (returns at once when late) and returns that intended time. */
    public long awaitSlot(long i) {
        long intended = intendedNanos(i);
        long remaining;
        while ((remaining = intended - System.nanoTime()) > 0) {
            if (remaining > PARK_THRESHOLD_NANOS) {
                LockSupport.parkNanos(remaining - PARK_MARGIN_NANOS);
            } else {
                Thread.yield();
            }
        }
        return intended;
    }

    /**
     * Like {@link #awaitSlot} but only parks (never yields or spins): costs no CPU while waiting, and returns up to the
     * kernel's timer slack (~50–100 µs) after the slot. For load generators that must not steal a core from the system
     * under test; measure latency from the actual send time then.
     */
    public long parkUntilSlot(long i) {
        long intended = intendedNanos(i);
        long remaining;
        while ((remaining = intended - System.nanoTime()) > 0) {
            LockSupport.parkNanos(remaining);
        }
        return intended;
    }
}
