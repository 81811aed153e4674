package io.sluice.redis.internal;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What the producer knows of one stream's recent appends: every {@code step}-th acknowledged entry's offset, in a
 * ring, so the trimmer can name the entry written about {@code maxLength} appends ago without asking Redis to walk the
 * stream. Written only by the thread that completes the producer's XADDs (its connection's event loop, one thread, in
 * reply order); read by the trimmer.
 */
public final class TrimState {
    final byte[] key;
    private final long maxLength;
    private final int step;
    private final AtomicLongArray samples;
    private volatile long appended;
    /** The last MINID this producer trimmed to (trimmer thread only). */
    long trimmedTo = -1;
    /**
     * {@link #appended} at the last pass that reached its wanted cut or failed (trimmer thread only): a stream not
     * written since is skipped. A pass held back by a group is retried every interval until the group catches up.
     */
    long settledAt = -1;

    TrimState(byte[] key, long maxLength) {
        this.key = key;
        this.maxLength = maxLength;
        this.step = (int) Math.max(1, Math.min(Integer.MAX_VALUE, maxLength / 64));
        int ring = maxLength == 0 ? 1 : (int) (maxLength / step) + 2;
        this.samples = new AtomicLongArray(ring);
    }

    /** Called in reply order for each acknowledged XADD to this stream. */
    public void appended(long offset) {
        long n = appended;
        if (maxLength > 0 && n % step == 0) {
            samples.lazySet((int) ((n / step) % samples.length()), offset);
        }
        appended = n + 1;
    }

    /**
     * The offset of the oldest entry to keep for {@code maxLength}: the entry appended {@code maxLength} (rounded up
     * to a step) appends ago; -1 while fewer than that were appended. Only this producer's appends are counted, so with
     * several producers a stream keeps more than {@code maxLength} entries, never fewer.
     */
    long appendedCount() {
        return appended;
    }

    long lengthBoundary() {
        long n = appended;
        if (maxLength <= 0 || n <= maxLength) {
            return -1;
        }
        long k = (n - maxLength) / step;
        return samples.get((int) (k % samples.length()));
    }
}
