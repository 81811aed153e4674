package io.sluice.records;

import java.nio.ByteBuffer;

/**
 * A record batch that passed {@link RecordBatchChecker#checkProduced}: only the checker creates one, so code that
 * takes a {@code CheckedBatch} (the broker's append of a producer's batch) knows by its type that the batch is whole,
 * sound and within the size bounds, and stores it without walking it again. It names the bytes
 * {@code [offset, offset + length)} of {@link #buffer()} and does not own them: they are valid as long as the buffer
 * they were checked in (a request frame); {@link #copy()} keeps them longer.
 */
public final class CheckedBatch {
    private final ByteBuffer buffer;
    private final int offset;
    private final int length;
    private final int recordCount;

    CheckedBatch(ByteBuffer buffer, int offset, int length, int recordCount) {
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
        this.recordCount = recordCount;
    }

    public ByteBuffer buffer() {
        return buffer;
    }

    public int offset() {
        return offset;
    }

    /** The batch's size in bytes. */
    public int length() {
        return length;
    }

    public int recordCount() {
        return recordCount;
    }

    /** Copies the batch's bytes to {@code dst[at, at + length)}. */
    public void copyTo(byte[] dst, int at) {
        buffer.get(offset, dst, at, length);
    }

    /** The same batch in a heap buffer of its own, still checked: to hold on to it after its frame is released. */
    public CheckedBatch copy() {
        byte[] bytes = new byte[length];
        copyTo(bytes, 0);
        return new CheckedBatch(ByteBuffer.wrap(bytes), 0, length, recordCount);
    }
}
