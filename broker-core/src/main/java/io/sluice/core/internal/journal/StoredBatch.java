package io.sluice.core.internal.journal;

import io.sluice.records.RecordBatch;
import net.openhft.chronicle.bytes.Bytes;

import java.nio.ByteBuffer;

/**
 * The record batch a Chronicle document holds, read with record-batch's codec, which works on {@link ByteBuffer}s: a
 * mapped document is not one, so what is read is copied out first, either the 61-byte header alone
 * ({@link #header}: offsets, count, framing) or the whole batch ({@link #whole}: to walk its records). Buffers are
 * owned and reused, growing to the largest batch read; nothing is allocated after that. Single-threaded.
 */
final class StoredBatch {
    private final ByteBuffer header = ByteBuffer.allocate(RecordBatch.HEADER_SIZE);
    private final RecordBatch flyweight = new RecordBatch();
    private ByteBuffer whole = ByteBuffer.allocate(0);

    /**
     * The header of the batch that fills {@code in}'s readable bytes (one batch per document); check it with
     * {@code framingProblem(in.readRemaining())} before trusting its fields.
     */
    RecordBatch header(Bytes<?> in) {
        int n = (int) Math.min(RecordBatch.HEADER_SIZE, in.readRemaining());
        in.read(in.readPosition(), header.array(), 0, n);
        return flyweight.wrap(header, 0, n);
    }

    /** What is wrong with the framing of the batch in {@code in}'s readable bytes, or null. */
    String framingProblem(Bytes<?> in) {
        return header(in).framingProblem(in.readRemaining());
    }

    /** A copy of {@code in}'s readable bytes, at index 0 of the returned buffer (valid until the next call). */
    ByteBuffer whole(Bytes<?> in) {
        int length = (int) in.readRemaining();
        if (whole.capacity() < length) {
            whole = ByteBuffer.allocate(Math.max(length, Math.min(Integer.MAX_VALUE - 8, whole.capacity() * 2)));
        }
        in.read(in.readPosition(), whole.array(), 0, length);
        return whole.limit(length);
    }
}
