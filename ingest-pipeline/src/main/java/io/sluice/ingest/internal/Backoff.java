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

    /** Waits the next delay (interruptible) and doubles it. */
    public void pause() throws InterruptedException {
        long d = nextMs + ThreadLocalRandom.current().nextLong(Math.max(1, nextMs / 4));
        nextMs = Math.min(maxMs, nextMs * 2);
        Thread.sleep(d);
    }

    public void reset() {
        nextMs = initialMs;
    }
}
