package io.sluice.core.internal.journal;

import io.sluice.records.RecordBatchReader;

import java.nio.ByteBuffer;

/**
 * Where the records of a stored batch start, kept beside the batch in its Chronicle document so that a read by offset
 * goes from the batch's header to its record without walking the length prefixes of the records before it (one cache
 * miss and, for 1 KiB records, a new page every four: docs/benchmarks.md, issue 22). The Kafka format has no such
 * index; Kafka's own offset index stops at the batch.
 *
 * <p>The journal writer appends it to the batches it encodes itself (coalesced events); a producer's batch is stored
 * as it came, without one. Layout, after the batch's {@code batchLength + 12} bytes, big-endian as the batch:
 * <pre>
 *   start[0] .. start[k-1]   i32   where record j × stride starts, in bytes from the batch's first byte
 *   stride                   i32   records between two entries (1 up to {@link #MAX_ENTRIES} records)
 *   k                        i32   entries: ceil(recordCount / stride), at most {@link #MAX_ENTRIES}
 *   magic                    i32   {@link #MAGIC}
 * </pre>
 * Every format-2 reader reads only {@code batchLength + 12} bytes of a document (framing, CRC, fetches), so documents
 * with and without these bytes are read alike, by this version and by the ones before it. The bytes are not covered by
 * the batch's CRC32C: a reader checks their framing here and uses a start only through
 * {@link RecordBatchReader#moveTo}, which checks it lies inside the batch, and decoding checks the offset delta found
 * there, so a damaged entry is reported as a damaged batch, never read as another record.
 */
final class RecordStarts {
    /** "SLRS": Sluice record starts. */
    static final int MAGIC = 0x534C5253;
    /** Entries at most: a batch of up to 64 records is indexed record by record, a larger one every stride-th. */
    static final int MAX_ENTRIES = 64;
    private static final int FOOTER = 12;
    /** The most these bytes take: what the journal writer reserves below its document bound. */
    static final int MAX_SIZE = FOOTER + 4 * MAX_ENTRIES;

    private RecordStarts() {
    }

    private static int stride(int records) {
        return (records + MAX_ENTRIES - 1) / MAX_ENTRIES;
    }

    /** Entries kept for {@code records} records: one every {@link #stride} records. */
    private static int entries(int records) {
        int stride = stride(records);
        return (records + stride - 1) / stride;
    }

    /** Bytes kept for a batch of {@code records} records: none below 2 (a read never walks there). */
    static int size(int records) {
        if (records < 2) {
            return 0;
        }
        return FOOTER + 4 * entries(records);
    }

    /**
     * Writes the starts of {@code records} records ({@code starts[i]}: where record i starts, from the batch's first
     * byte) at {@code out[at, at + size(records))}, which must have room.
     */
    static void write(ByteBuffer out, int at, int[] starts, int records) {
        if (records < 2) {
            return;
        }
        int stride = stride(records);
        int k = entries(records);
        for (int j = 0; j < k; j++) {
            out.putInt(at + 4 * j, starts[j * stride]);
        }
        int footer = at + 4 * k;
        out.putInt(footer, stride);
        out.putInt(footer + 4, k);
        out.putInt(footer + 8, MAGIC);
    }

    /**
     * Moves {@code cursor}, opened on the batch at the start of {@code document} (limit: the document's length) and
     * before its first record, to the nearest record at or before record {@code n} that the document's starts name.
     *
     * @return the record the cursor is now before, or -1 if the document keeps no sound starts (walk from the first)
     * @throws io.sluice.records.MalformedBatchException if a start lies outside the batch
     */
    static int moveNear(RecordBatchReader cursor, ByteBuffer document, int n) {
        int batchBytes = cursor.batch().sizeInBytes();
        int extra = document.limit() - batchBytes;
        int records = cursor.recordCount();
        if (extra <= 0 || extra != size(records)) {
            return -1;
        }
        int footer = document.limit() - FOOTER;
        int stride = document.getInt(footer);
        int k = document.getInt(footer + 4);
        if (document.getInt(footer + 8) != MAGIC || stride != stride(records) || k != (extra - FOOTER) / 4) {
            return -1;
        }
        int j = Math.min(n / stride, k - 1);
        if (j <= 0) {
            return 0;
        }
        cursor.moveTo(j * stride, document.getInt(batchBytes + 4 * j));
        return j * stride;
    }
}
