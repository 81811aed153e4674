package io.sluice.testkit;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Polls a condition until it holds or a deadline passes: the one way Sluice's tests wait (never a fixed sleep as
 * synchronisation). The poll interval backs off from 1 ms to 20 ms.
 */
public final class Await {
    private static final long MAX_PARK_NANOS = 20_000_000L;

    private Await() {
    }

    /** Fails with an {@link AssertionError} naming {@code what} if {@code condition} does not hold within {@code deadline}. */
    public static void until(String what, Duration deadline, BooleanSupplier condition) {
        until(() -> what, deadline, condition);
    }

    /** As {@link #until(String, Duration, BooleanSupplier)}; the description is built only on failure (for example with a log). */
    public static void until(Supplier<String> what, Duration deadline, BooleanSupplier condition) {
        long end = System.nanoTime() + deadline.toNanos();
        long park = 1_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("not reached within " + deadline + ": " + what.get());
            }
            LockSupport.parkNanos(park);
            if (Thread.interrupted()) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what.get());
            }
            park = Math.min(park * 2, MAX_PARK_NANOS);
        }
    }
}
