package io.sluice.core.internal.journal;

import io.sluice.records.RecordBatchReader;

import java.nio.ByteBuffer;

/**
 * Where records start inside stored batches. A document the journal writer encoded keeps its batch's record starts
 * beside it ({@link RecordStarts}): a read by offset moves there directly. For a batch without them (a producer's,
 * stored as it came), the starts of recently read batches are learnt here: for each, the byte position of every {@code stride}-th
 * record, learnt while walking it, so a read by offset into a batch it has seen walks at most {@code stride - 1}
 * length prefixes instead of every record before its own (a record's length prefix is the only way to the next one;
 * in a 1 MiB batch of 1 KiB events, half a batch of prefixes is ~500 cache lines, several microseconds).
 *
 * <p>Bounded: {@link #SLOTS} batches, direct-mapped by Chronicle index (a batch evicts the one in its slot), each
 * with at most {@link #POSITIONS} positions (the stride grows with the batch's record count): at most ~40 KiB per
 * reader, allocated only for batches positioned into past their first {@code stride} records. A stored batch never
 * changes and a Chronicle index is never reused, so an entry stays true; positions are still only hints to
 * {@link RecordBatchReader#moveTo}, which checks what it finds there.
 *
 * <p>Single-threaded: one per {@link JournalReader}.
 */
final class RecordPositions {
    static final int SLOTS = 128;
    static final int POSITIONS = 64;

    private static final class Batch {
        long index = -1;
        int stride;
        /** positions[k]: where record k × stride starts; entries [0, known) are filled */
        final int[] positions = new int[POSITIONS];
        int known;
    }

    private final Batch[] slots = new Batch[SLOTS];

    /**
     * Moves {@code cursor}, opened on the batch stored at Chronicle {@code index} (at the start of {@code document},
     * whose limit is the document's length) and before its first record, past {@code n} records: from the nearest
     * start at or before record {@code n} that the document keeps or that was learnt, then by length prefixes,
     * learning the positions it passes.
     */
    void skip(RecordBatchReader cursor, ByteBuffer document, long index, int n) {
        int from = RecordStarts.moveNear(cursor, document, n);
        if (from >= 0) {
            cursor.skip(n - from); // the document says where its records start: less than a stride to walk
            return;
        }
        int count = cursor.recordCount();
        int stride = (count + POSITIONS - 1) / POSITIONS;
        if (n < Math.max(stride, 2)) {
            cursor.skip(n); // within the first stride: nothing to gain
            return;
        }
        int slot = (int) (index ^ (index >>> 32)) & (SLOTS - 1);
        Batch b = slots[slot];
        if (b == null) {
            b = slots[slot] = new Batch();
        }
        if (b.index != index || b.stride != stride) {
            b.index = index;
            b.stride = stride;
            b.positions[0] = cursor.recordPosition();
            b.known = 1;
        }
        int k = Math.min(n / stride, b.known - 1);
        if (k > 0) {
            cursor.moveTo(k * stride, b.positions[k]);
        }
        for (int i = k * stride; i < n; ) {
            cursor.skip(1);
            i++;
            if (i % stride == 0 && i / stride == b.known) {
                b.positions[b.known++] = cursor.recordPosition();
            }
        }
    }
}
