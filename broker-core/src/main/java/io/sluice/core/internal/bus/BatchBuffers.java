package io.sluice.core.internal.bus;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The bytes of the record batches waiting in one partition ring, bounded in count and in bytes.
 *
 * <p>A ring slot cannot own a batch's bytes: a slot keeps whatever it last held until the ring wraps onto it, so
 * 16,384 slots that each once carried a 64 KiB batch would pin 1 GiB per partition. Instead a batch slot names one of
 * {@link #ENTRIES} buffers here by index (an index pins nothing), and the buffer is free again once every consumer of
 * the ring has passed that slot (the ring's minimum gating sequence, read by the next producer). Buffers are kept for
 * reuse while their total stays within {@link #MEMORY_BYTES}; a batch that does not fit is refused, and the caller
 * reports it as back-pressure, exactly like a full ring.
 *
 * <p>Producers only, under this object's monitor; the journal writer and subscribers read {@link #buffer(int)} of a
 * published slot, which the ring's publication makes visible.
 */
final class BatchBuffers {
    /** Batches in flight per partition: with 64 KiB batches, 4 MiB of records waiting for the journal writer. */
    static final int ENTRIES = 64;
    /** Bytes of batch buffers one partition keeps; one batch larger than this is still taken when nothing waits. */
    static final long MEMORY_BYTES = 16L << 20;
    /** Buffers are sized in steps of this, so batches of slightly different sizes reuse one buffer. */
    private static final int GRAIN = 16 << 10;

    private final byte[][] buffers = new byte[ENTRIES][];
    /** A view of each buffer for the codec (absolute reads and writes only), made once per buffer, not per batch. */
    private final ByteBuffer[] views = new ByteBuffer[ENTRIES];
    /** Ring sequence of the slot using each buffer; free once every consumer passed it ({@code Long.MIN_VALUE}: never used). */
    private final long[] usedBy = new long[ENTRIES];
    private long retainedBytes;

    BatchBuffers() {
        Arrays.fill(usedBy, Long.MIN_VALUE);
    }

    /**
     * Finds a free buffer of at least {@code length} bytes, growing or allocating one within the memory bound.
     *
     * @param consumed every consumer of the ring is past this sequence: buffers used by slots up to it are free
     * @return the buffer's index, or -1 if every buffer is in use or the bytes do not fit the bound
     */
    int acquire(int length, long consumed) {
        if (retainedBytes > MEMORY_BYTES) {
            releaseFree(consumed, -1); // a batch larger than the bound was taken earlier: give its bytes back once done
        }
        int free = -1;
        for (int i = 0; i < ENTRIES; i++) {
            if (usedBy[i] > consumed) {
                continue; // still read by the journal writer or a subscriber
            }
            byte[] b = buffers[i];
            if (b != null && b.length >= length) {
                return i;
            }
            if (free < 0 || (b != null && (buffers[free] == null || b.length > buffers[free].length))) {
                free = i; // the largest free buffer is the cheapest to grow
            }
        }
        if (free < 0) {
            return -1;
        }
        long held = buffers[free] == null ? 0 : buffers[free].length;
        if (retainedBytes - held + length > MEMORY_BYTES) {
            releaseFree(consumed, free);
            if (retainedBytes - held + length > MEMORY_BYTES && retainedBytes > held) {
                return -1;
            }
        }
        int capacity = (int) Math.min(Integer.MAX_VALUE - 8, (length + GRAIN - 1L) / GRAIN * GRAIN);
        retainedBytes += capacity - held;
        buffers[free] = new byte[capacity];
        views[free] = ByteBuffer.wrap(buffers[free]);
        return free;
    }

    /** Marks buffer {@code index} as used by the slot at {@code sequence}. */
    void use(int index, long sequence) {
        usedBy[index] = sequence;
    }

    /** Gives back a buffer that was acquired but not published (the ring was full). */
    void unuse(int index) {
        usedBy[index] = Long.MIN_VALUE;
    }

    byte[] buffer(int index) {
        return buffers[index];
    }

    /** {@link #buffer(int)} as a ByteBuffer over the same array; readers use absolute indexes only. */
    ByteBuffer view(int index) {
        return views[index];
    }

    /** Drops every free buffer but {@code keep}, so their bytes can go to a larger batch. */
    private void releaseFree(long consumed, int keep) {
        for (int i = 0; i < ENTRIES; i++) {
            if (i != keep && buffers[i] != null && usedBy[i] <= consumed) {
                retainedBytes -= buffers[i].length;
                buffers[i] = null;
                views[i] = null;
            }
        }
    }

    long retainedBytes() {
        return retainedBytes;
    }
}
