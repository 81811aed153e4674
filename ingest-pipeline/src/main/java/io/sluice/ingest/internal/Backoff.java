package io.sluice.ingest.internal;

import java.util.concurrent.ThreadLocalRandom;

/** Bounded exponential backoff with jitter: initial, doubling, capped at max. One instance per retry loop. */
public final class Backoff {
    private final long initialMs;
    private final long maxMs;
    private long nextMs;

    public Backoff(long initialMs, long maxMs) {
        this.initialMs = initialMs;
        this.maxMs = maxMs;
        this.nextMs = initialMs;
    }

    /**
     * The next delay in ms, and the one after it doubled (capped at max): the current step plus a jitter below a
     * quarter of it, so delays lie in [step, step * 1.25).
     */
    public long nextDelayMs() {
        long d = nextMs + ThreadLocalRandom.current().nextLong(Math.max(1, nextMs / 4));
        nextMs = Math.min(maxMs, nextMs * 2);
        return d;
    }

    /** Waits the next delay (interruptible) and doubles it. */
    public void pause() throws InterruptedException {
        Thread.sleep(nextDelayMs());
    }

    /** As {@link #pause()}, returning early (in steps of at most 50 ms) once {@code stop} is true. */
    public void pause(java.util.function.BooleanSupplier stop) throws InterruptedException {
        long d = nextDelayMs();
        long end = System.nanoTime() + d * 1_000_000L;
        long left;
        while (!stop.getAsBoolean() && (left = end - System.nanoTime()) > 0) {
            Thread.sleep(Math.min(50, Math.max(1, left / 1_000_000L)));
        }
    }

    public void reset() {
        nextMs = initialMs;
    }
}
