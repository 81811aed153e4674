package io.sluice.records;

import io.sluice.core.Header;

import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Builds one batch in place in a {@link ByteBuffer}: {@link #begin}, {@link #append} per record, {@link #finish},
 * which fills in the header ({@link RecordBatch}: base offset, length, count, timestamps, CRC32C; partition leader
 * epoch, producer id/epoch and base sequence -1, attributes 0: uncompressed, CreateTime, not transactional). The
 * bytes are the ones Kafka's {@code MemoryRecords.withRecords} produces for the same records.
 *
 * <p>Absolute writes only: the buffer's position and limit are not moved (the limit bounds the batch), so the caller
 * may hand in a view of memory it owns: a Chronicle scratch, a Netty buffer's {@code nioBuffer}, a ring slot's array.
 * Single-threaded, reusable, allocation-free.
 */
public final class RecordBatchWriter {
    private final RecordBatch header = new RecordBatch();
    private ByteBuffer out;
    private int start = -1;
    private int position;
    private int count;
    private long baseTimestamp;
    private long maxTimestamp;

    /**
     * Starts a batch at index {@code offset} of {@code out}; the header is filled in by {@link #finish}.
     *
     * @throws BufferOverflowException if the header does not fit below the buffer's limit
     */
    public void begin(ByteBuffer out, int offset) {
        if (offset < 0 || offset > out.limit() - RecordBatch.HEADER_SIZE) {
            throw new BufferOverflowException();
        }
        this.out = out;
        this.start = offset;
        this.position = offset + RecordBatch.HEADER_SIZE;
        this.count = 0;
        this.baseTimestamp = 0;
        this.maxTimestamp = Long.MIN_VALUE;
    }

    /**
     * Continues the open batch in {@code moved}, a buffer holding the bytes written so far at the same indexes (the
     * caller grew the memory under the batch, as a Netty buffer's {@code ensureWritable} does).
     */
    public void moveTo(ByteBuffer moved) {
        if (position > moved.limit()) {
            throw new IllegalArgumentException("the batch's " + (position - start) + " bytes do not fit the new buffer");
        }
        this.out = moved;
    }

    /** True between {@link #begin} and {@link #finish}/{@link #abandon}. */
    public boolean isOpen() {
        return start >= 0;
    }

    /** Records appended since {@link #begin}. */
    public int count() {
        return count;
    }

    /** Bytes of the batch so far, header included; 0 when none is open. */
    public int size() {
        return start < 0 ? 0 : position - start;
    }

    /** The index one past the last byte written. */
    public int position() {
        return position;
    }

    /** Bytes left below the buffer's limit. */
    public int remaining() {
        return out == null ? 0 : out.limit() - position;
    }

    /**
     * Appends one record with offset delta {@link #count()}. If it cannot be encoded (no room below the limit: a
     * {@link BufferOverflowException}; a null header list or header: a {@link NullPointerException}) nothing is
     * written and the batch is as it was.
     *
     * @param keyLength -1 for a null key
     */
    public void append(long timestamp, byte[] key, int keyLength, byte[] value, int valueLength, List<Header> headers) {
        long base = count == 0 ? timestamp : baseTimestamp;
        long timestampDelta = timestamp - base;
        int headerCount = headers.size();
        int body = 1 + Varints.sizeOfVarlong(timestampDelta) + Varints.sizeOfVarint(count)
                + Varints.sizeOfVarint(keyLength) + Math.max(0, keyLength)
                + Varints.sizeOfVarint(valueLength) + valueLength
                + Varints.sizeOfVarint(headerCount);
        for (int i = 0; i < headerCount; i++) {
            Header h = headers.get(i);
            int k = Varints.utf8Length(h.key());
            int v = h.value().length;
            body += Varints.sizeOfVarint(k) + k + Varints.sizeOfVarint(v) + v;
        }
        int size = Varints.sizeOfVarint(body) + body;
        if (size > out.limit() - position) {
            throw new BufferOverflowException();
        }
        int p = position;
        p = Varints.writeVarint(out, p, body);
        out.put(p++, (byte) 0); // attributes
        p = Varints.writeVarlong(out, p, timestampDelta);
        p = Varints.writeVarint(out, p, count);
        p = Varints.writeVarint(out, p, keyLength);
        if (keyLength > 0) {
            out.put(p, key, 0, keyLength);
            p += keyLength;
        }
        p = Varints.writeVarint(out, p, valueLength);
        out.put(p, value, 0, valueLength);
        p += valueLength;
        p = Varints.writeVarint(out, p, headerCount);
        for (int i = 0; i < headerCount; i++) {
            Header h = headers.get(i);
            p = Varints.writeVarint(out, p, Varints.utf8Length(h.key()));
            p = Varints.writeUtf8(out, p, h.key());
            p = Varints.writeVarint(out, p, h.value().length);
            out.put(p, h.value());
            p += h.value().length;
        }
        position = p;
        baseTimestamp = base;
        if (timestamp > maxTimestamp) {
            maxTimestamp = timestamp;
        }
        count++;
    }

    /** Fills in the header, CRC32C last. Returns the batch's size in bytes; the writer is then closed. */
    public int finish(long baseOffset) {
        int size = position - start;
        ByteBuffer b = out;
        b.putLong(start + RecordBatch.BASE_OFFSET_OFFSET, baseOffset);
        b.putInt(start + RecordBatch.BATCH_LENGTH_OFFSET, size - RecordBatch.LOG_OVERHEAD);
        b.putInt(start + RecordBatch.PARTITION_LEADER_EPOCH_OFFSET, -1);
        b.put(start + RecordBatch.MAGIC_OFFSET, RecordBatch.MAGIC);
        b.putShort(start + RecordBatch.ATTRIBUTES_OFFSET, (short) 0);
        b.putInt(start + RecordBatch.LAST_OFFSET_DELTA_OFFSET, count - 1);
        b.putLong(start + RecordBatch.BASE_TIMESTAMP_OFFSET, baseTimestamp);
        b.putLong(start + RecordBatch.MAX_TIMESTAMP_OFFSET, count == 0 ? -1 : maxTimestamp);
        b.putLong(start + RecordBatch.PRODUCER_ID_OFFSET, RecordBatch.NO_PRODUCER_ID);
        b.putShort(start + RecordBatch.PRODUCER_EPOCH_OFFSET, RecordBatch.NO_PRODUCER_EPOCH);
        b.putInt(start + RecordBatch.BASE_SEQUENCE_OFFSET, RecordBatch.NO_SEQUENCE);
        b.putInt(start + RecordBatch.RECORDS_COUNT_OFFSET, count);
        header.wrap(b, start, size).updateCrc();
        abandon();
        return size;
    }

    /** Forgets the batch begun. */
    public void abandon() {
        start = -1;
        out = null;
    }

    /**
     * An upper bound of the bytes one record adds to a batch, cheap enough to call before encoding it (header keys
     * counted at 3 bytes a char): what a batch's buffer must have left for {@link #append} to succeed, and what a
     * producer's buffer memory accounts per record.
     *
     * @param keyLength -1 for a null key
     * @param headers   null counts as none (such a record then fails in {@link #append}, which is where callers
     *                  report it)
     */
    public static int maxRecordSize(int keyLength, int valueLength, List<Header> headers) {
        int size = 5 + 1 + 10 + 5 + 5 + Math.max(0, keyLength) + 5 + valueLength + 5;
        if (headers != null) {
            for (int i = 0, n = headers.size(); i < n; i++) { // indexed: runs on every send
                Header h = headers.get(i);
                size += 5 + 3 * h.key().length() + 5 + h.value().length;
            }
        }
        return size;
    }
}
