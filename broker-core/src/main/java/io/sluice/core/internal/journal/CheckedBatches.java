package io.sluice.core.internal.journal;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Which stored batches need their CRC32C checked when read, so a batch is checked once instead of on every read that
 * positions in it (a read by offset into a 1 MiB batch used to checksum all of it for one record).
 *
 * <ul>
 *   <li>Batches this journal committed itself (Chronicle index at or after {@link #writtenFrom}) are never checked on
 *       read: each was checked before it was stored (a producer's batch by {@code RecordBatchChecker}, the journal
 *       writer's own by construction) and is read back from the same mapped pages it was written to.</li>
 *   <li>Batches recovered from disk (written before this journal was opened: a crash, a torn page, a damaged file)
 *       are checked on their first read, and again whenever they have fallen out of a small cache of sound ones: a
 *       direct-mapped table of {@link #SLOTS} Chronicle indexes. A damaged batch is never recorded, so it fails every
 *       read.</li>
 * </ul>
 *
 * Written by the journal writer ({@link #written}) and by any reader ({@link #sound}); read by any reader. A slot
 * holds one whole index (an {@link AtomicLongArray} element), so a race between two readers only loses an entry.
 */
final class CheckedBatches {
    /** Recovered batches remembered as sound: 8 bytes each, 8 KiB per partition. */
    static final int SLOTS = 1 << 10;

    /** Chronicle index of the first batch this journal committed; {@code Long.MAX_VALUE} until then. */
    private volatile long writtenFrom = Long.MAX_VALUE;
    /** index + 1 of a recovered batch that passed its CRC32C; 0 = empty */
    private final AtomicLongArray sound = new AtomicLongArray(SLOTS);

    /** Whether a read of the batch at Chronicle {@code index} must check its CRC32C. Any thread. */
    boolean needsCheck(long index) {
        return index < writtenFrom && sound.getAcquire(slot(index)) != index + 1;
    }

    /** The batch at {@code index} passed its CRC32C. Any thread. */
    void sound(long index) {
        if (index < writtenFrom) {
            sound.setRelease(slot(index), index + 1);
        }
    }

    /**
     * This journal committed a batch at {@code index}. Journal writer only, before the batch is published (the end
     * offset's volatile write): Chronicle indexes only grow, so every recovered batch lies below the first one.
     */
    void written(long index) {
        if (writtenFrom == Long.MAX_VALUE) {
            writtenFrom = index;
        }
    }

    private static int slot(long index) {
        return (int) (index ^ (index >>> 32)) & (SLOTS - 1);
    }
}
