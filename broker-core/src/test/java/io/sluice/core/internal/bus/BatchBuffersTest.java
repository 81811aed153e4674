package io.sluice.core.internal.bus;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The batch memory of a partition ring: bounded in entries and bytes, free again once every consumer passed. */
class BatchBuffersTest {
    private static final int MIB = 1 << 20;

    @Test
    void atMostEntriesBatchesWaitAndEachIsFreeOnceConsumersPassedItsSlot() {
        BatchBuffers b = new BatchBuffers();
        for (long seq = 0; seq < BatchBuffers.ENTRIES; seq++) {
            int i = b.acquire(1000, -1);
            assertThat(i).isGreaterThanOrEqualTo(0);
            b.use(i, seq);
        }
        assertThat(b.acquire(1000, -1)).isEqualTo(-1);
        int reused = b.acquire(1000, 0); // the slot at sequence 0 was consumed
        assertThat(reused).isGreaterThanOrEqualTo(0);
        b.use(reused, 64);
        assertThat(b.acquire(1000, 0)).isEqualTo(-1);
        assertThat(b.retainedBytes()).isEqualTo(BatchBuffers.ENTRIES * 16L * 1024); // one 16 KiB grain each, reused
    }

    @Test
    void bytesStayWithinTheBoundExceptForOneLargeBatchWhenNothingElseWaits() {
        BatchBuffers b = new BatchBuffers();
        int seq = 0;
        int i;
        while ((i = b.acquire(4 * MIB, -1)) >= 0) {
            b.use(i, seq++);
        }
        assertThat(seq).isEqualTo(4);
        assertThat(b.retainedBytes()).isLessThanOrEqualTo(BatchBuffers.MEMORY_BYTES);

        // everything consumed: a batch larger than the whole bound is still taken, the free buffers make room for it
        int big = b.acquire(20 * MIB, seq);
        assertThat(big).isGreaterThanOrEqualTo(0);
        b.use(big, seq++);
        assertThat(b.retainedBytes()).isEqualTo(20L * MIB);
        // while it waits, nothing more fits
        assertThat(b.acquire(MIB, seq - 2)).isEqualTo(-1);
        // once consumed, its bytes are given back and small batches fit within the bound again
        assertThat(b.acquire(MIB, seq)).isGreaterThanOrEqualTo(0);
        assertThat(b.retainedBytes()).isEqualTo(MIB);
    }
}
