package io.sluice.core.internal.journal;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which batches a read checks the CRC32C of: every batch recovered from disk until it is found sound (and again once
 * it falls out of the bounded cache), never one this journal committed itself.
 */
class CheckedBatchesTest {
    private static final long CYCLE = 20_000L << 32;

    @Test
    void aRecoveredBatchIsCheckedUntilFoundSoundAndAgainOnceEvicted() {
        CheckedBatches checked = new CheckedBatches();
        long index = CYCLE + 5;
        assertThat(checked.needsCheck(index)).isTrue();
        assertThat(checked.needsCheck(index)).as("not found sound yet: a damaged batch fails every read").isTrue();
        checked.sound(index);
        assertThat(checked.needsCheck(index)).isFalse();
        assertThat(checked.needsCheck(index + 1)).isTrue();

        long sameSlot = index + CheckedBatches.SLOTS;
        checked.sound(sameSlot);
        assertThat(checked.needsCheck(sameSlot)).isFalse();
        assertThat(checked.needsCheck(index)).as("evicted by a batch of the same slot").isTrue();
    }

    @Test
    void batchesThisJournalCommittedAreNeverCheckedOnRead() {
        CheckedBatches checked = new CheckedBatches();
        long firstWritten = CYCLE + 100;
        checked.written(firstWritten);
        checked.written(firstWritten + 1);
        assertThat(checked.needsCheck(firstWritten)).isFalse();
        assertThat(checked.needsCheck(firstWritten + 1)).isFalse();
        assertThat(checked.needsCheck(CYCLE + (1L << 32))).as("a later cycle").isFalse();
        assertThat(checked.needsCheck(firstWritten - 1)).as("recovered, below the first written").isTrue();
        assertThat(checked.needsCheck(0)).isTrue();
    }
}
