package io.sluice.bench.internal;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/** Polling with a deadline (never a fixed sleep as synchronisation). */
public final class Await {
    private Await() {
    }

    /** Waits until {@code counter} reaches {@code target}; throws with both figures when the deadline passes. */
    public static void count(String what, LongSupplier counter, long target, Duration timeout) throws TimeoutException {
        long deadline = System.nanoTime() + timeout.toNanos();
        long seen;
        while ((seen = counter.getAsLong()) < target) {
            if (System.nanoTime() > deadline) {
                throw new TimeoutException(what + ": " + seen + " of " + target + " after " + timeout);
            }
            Thread.yield();
            if (seen + 1000 < target) {
                java.util.concurrent.locks.LockSupport.parkNanos(50_000);
            }
        }
    }

    public static void until(String what, BooleanSupplier condition, Duration timeout) throws TimeoutException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new TimeoutException(what + " not reached after " + timeout);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
    }
}
