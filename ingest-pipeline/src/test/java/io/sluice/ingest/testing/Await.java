package io.sluice.ingest.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polls a condition with a deadline: the tests' only way to wait (no fixed sleeps). */
public final class Await {
    private Await() {
    }

    /** Polls {@code condition} every 20 ms until it holds; fails with {@code what} after {@code deadline}. */
    public static void until(String what, Duration deadline, BooleanSupplier condition) {
        ServerProcess.awaitCondition(what, deadline, condition);
    }
}
