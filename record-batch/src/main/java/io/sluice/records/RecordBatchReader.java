package io.sluice.records;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.Header;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Walks the records of a batch in place. {@link #open} checks the framing and, if asked, the CRC32C; then per record
 * {@link #advance} (decodes it into this reader's fields: offset, timestamp, where the key and value lie; allocates
 * nothing), {@link #next} (the same, returned as a {@link ConsumerRecord}) or {@link #skip} (moves past it using only
 * its length). Every length is checked against the record that holds it and every record against the batch, so a
 * damaged batch is a {@link MalformedBatchException} naming the offset it claims, never a read past its end.
 *
 * <pre>
 *  record: length varint | attributes i8 | timestampDelta varlong | offsetDelta varint
 *          | keyLength varint (-1: null) | key | valueLength varint | value
 *          | headerCount varint | headerCount × (keyLength varint | UTF-8 key | valueLength varint | value)
 * </pre>
 * Varints are zig-zag encoded as in Kafka (protobuf's {@code sint32}/{@code sint64}). Sluice's records always have a
 * value (a negative value length is malformed) and offset deltas 0, 1, 2, ... (checked).
 *
 * <p>Single-threaded and reusable: one per journal reader, subscriber thread or fetch decoder.
 */
public final class RecordBatchReader {
    private final RecordBatch batch = new RecordBatch();
    private ByteBuffer buffer;
    /** absolute index of the batch's first byte in {@link #buffer} */
    private int start;
    /** absolute read position in {@link #buffer} */
    private int p;
    /** absolute index one past the batch */
    private int end;
    private int count;
    /** records consumed */
    private int index;
    private long baseOffset;
    private long baseTimestamp;

    // the record last decoded by advance()
    private byte attributes;
    private long timestamp;
    private int offsetDelta;
    private int keyOffset;
    private int keyLength;
    private int valueOffset;
    private int valueLength;
    private int headersOffset;
    private int headerCount;
    private int headerBytes;

    /**
     * Positions on the batch at {@code [offset, offset + available)} of {@code buffer}, before its first record.
     *
     * @return the batch's header, as a flyweight valid until the next {@code open}
     * @throws MalformedBatchException for bad framing or (with {@code verifyCrc}) a CRC32C mismatch; the reader then
     *                                 has no record
     */
    public RecordBatch open(ByteBuffer buffer, int offset, int available, boolean verifyCrc) {
        this.buffer = buffer;
        this.count = 0;
        this.index = 0;
        batch.wrap(buffer, offset, available);
        String problem = verifyCrc ? batch.problem() : batch.framingProblem();
        if (problem != null) {
            throw new MalformedBatchException(available >= 8 ? batch.baseOffset() : -1, problem);
        }
        this.start = offset;
        this.end = offset + batch.sizeInBytes();
        this.baseOffset = batch.baseOffset();
        this.baseTimestamp = batch.baseTimestamp();
        this.count = batch.count();
        this.p = offset + RecordBatch.HEADER_SIZE;
        if (count == 0 && p != end) {
            throw malformed((end - p) + " bytes left after the batch's 0 records");
        }
        return batch;
    }

    /** The batch opened last. */
    public RecordBatch batch() {
        return batch;
    }

    public long baseOffset() {
        return baseOffset;
    }

    public int recordCount() {
        return count;
    }

    /** One past the last offset of the batch. */
    public long nextOffset() {
        return baseOffset + count;
    }

    public boolean hasNext() {
        return index < count;
    }

    /** Offset of the next record without consuming it. */
    public long peekOffset() {
        int saved = p;
        try {
            int recordEnd = recordEnd();
            p++; // attributes
            readVarlong(recordEnd);
            return baseOffset + readVarint(recordEnd);
        } finally {
            p = saved;
        }
    }

    /** Moves past the next record using only its length; returns its offset. */
    public long skip() {
        long offset = peekOffset();
        p = recordEnd();
        consumed();
        return offset;
    }

    /**
     * Moves past the next {@code n} records by their length prefixes alone, one varint each: how a read by offset gets
     * to its record inside a batch (offsets are dense in a batch; {@link #advance} then checks the offset delta of the
     * record it decodes).
     */
    public void skip(int n) {
        if (n > count - index) {
            throw malformed("cannot skip " + n + " records, " + (count - index) + " left in the batch");
        }
        for (int i = 0; i < n; i++) {
            p = recordEnd();
            consumed();
        }
    }

    /** Index in the batch of the next record (0 for the first): the records consumed so far. */
    public int recordIndex() {
        return index;
    }

    /** Where the next record starts (its length prefix), in bytes from the batch's first byte. */
    public int recordPosition() {
        return p - start;
    }

    /**
     * Moves forward to record {@code recordIndex}, which starts {@code position} bytes into the batch, as an earlier
     * walk of the same stored batch found it ({@link #recordIndex()}, {@link #recordPosition()}): a cached position
     * saves walking the length prefixes before it. The position is checked to lie inside the batch, at or after the
     * current record; what is decoded there is checked as always ({@link #advance} checks the offset delta), so a
     * wrong position is a {@link MalformedBatchException}, never a read outside the batch.
     */
    public void moveTo(int recordIndex, int position) {
        if (recordIndex < index || recordIndex >= count || position < p - start || position >= end - start
                || (recordIndex == index && position != p - start)) {
            throw malformed("cannot move to record " + recordIndex + " at byte " + position + " from record " + index
                    + " at byte " + (p - start) + " of " + count + " records in " + (end - start) + " bytes");
        }
        index = recordIndex;
        p = start + position;
    }

    /**
     * Decodes the next record into this reader ({@link #offset}, {@link #timestamp}, {@link #keyOffset}, ...), checking
     * every length in it. Allocates nothing.
     */
    public void advance() {
        int recordEnd = recordEnd();
        if (p >= recordEnd) {
            throw malformed("record " + index + " is empty");
        }
        attributes = buffer.get(p++);
        long timestampDelta = readVarlong(recordEnd);
        offsetDelta = readVarint(recordEnd);
        if (offsetDelta != index) {
            throw malformed("record " + index + " has offset delta " + offsetDelta);
        }
        keyLength = readVarint(recordEnd);
        keyOffset = p;
        p = skip(keyLength, -1, recordEnd, "key");
        valueLength = readVarint(recordEnd);
        valueOffset = p;
        p = skip(valueLength, 0, recordEnd, "value");
        headerCount = readVarint(recordEnd);
        if (headerCount < 0 || headerCount > recordEnd - p) {
            throw malformed("record " + index + " has header count " + headerCount);
        }
        headersOffset = p;
        headerBytes = 0;
        for (int h = 0; h < headerCount; h++) {
            int kl = readVarint(recordEnd);
            p = skip(kl, 0, recordEnd, "header key");
            int vl = readVarint(recordEnd);
            p = skip(vl, 0, recordEnd, "header value");
            headerBytes += kl + vl;
        }
        if (p != recordEnd) {
            throw malformed("record " + index + " ends " + (recordEnd - p) + " bytes before its length says");
        }
        timestamp = baseTimestamp + timestampDelta;
        consumed();
    }

    /** Decodes the next record ({@link #advance}) and returns it with copies of its key, value and headers. */
    public ConsumerRecord next(String topic, int partition) {
        advance();
        return current(topic, partition);
    }

    /** The record {@link #advance} decoded last, with copies of its key, value and headers. */
    public ConsumerRecord current(String topic, int partition) {
        byte[] key = null;
        if (keyLength >= 0) {
            key = new byte[keyLength];
            buffer.get(keyOffset, key, 0, keyLength);
        }
        byte[] value = new byte[valueLength];
        buffer.get(valueOffset, value, 0, valueLength);
        return new ConsumerRecord(topic, partition, offset(), timestamp, key, value, headers());
    }

    /**
     * Decodes every batch in {@code [offset, offset + length)} of {@code in}, adding to {@code out} the records at or
     * after {@code fromOffset} in offset order; records before it (the first batch may start earlier) are skipped
     * without being decoded. Every batch's CRC32C is checked before any of its records is added.
     *
     * @return the number of records added
     * @throws MalformedBatchException at the first damaged batch; records of earlier batches are already in {@code out}
     */
    public int readAll(ByteBuffer in, int offset, int length, String topic, int partition, long fromOffset,
                       List<ConsumerRecord> out) {
        int added = 0;
        int at = offset;
        int limit = offset + length;
        while (at < limit) {
            RecordBatch b = open(in, at, limit - at, true);
            while (hasNext() && peekOffset() < fromOffset) {
                skip();
            }
            while (hasNext()) {
                out.add(next(topic, partition));
                added++;
            }
            at += b.sizeInBytes();
        }
        return added;
    }

    // ---- the record advance() decoded ----

    public long offset() {
        return baseOffset + offsetDelta;
    }

    public long timestamp() {
        return timestamp;
    }

    /** The record's attributes byte (0 in every batch Sluice writes). */
    public byte attributes() {
        return attributes;
    }

    /** The buffer the key and value offsets index. */
    public ByteBuffer buffer() {
        return buffer;
    }

    /** -1 for a null key. */
    public int keyLength() {
        return keyLength;
    }

    /** Absolute index of the key in {@link #buffer()}. */
    public int keyOffset() {
        return keyOffset;
    }

    public int valueLength() {
        return valueLength;
    }

    /** Absolute index of the value in {@link #buffer()}. */
    public int valueOffset() {
        return valueOffset;
    }

    public int headerCount() {
        return headerCount;
    }

    /** The bytes of the record's header keys and values, framing excluded. */
    public int headerBytes() {
        return headerBytes;
    }

    /** The record's headers, decoded (a new list; {@code List.of()} when there are none). */
    public List<Header> headers() {
        if (headerCount == 0) {
            return List.of();
        }
        int saved = p;
        p = headersOffset;
        List<Header> headers = new ArrayList<>(headerCount);
        for (int h = 0; h < headerCount; h++) {
            int kl = readVarint(Integer.MAX_VALUE);
            byte[] k = new byte[kl];
            buffer.get(p, k, 0, kl);
            p += kl;
            int vl = readVarint(Integer.MAX_VALUE);
            byte[] v = new byte[vl];
            buffer.get(p, v, 0, vl);
            p += vl;
            headers.add(new Header(new String(k, StandardCharsets.UTF_8), v));
        }
        p = saved;
        return headers;
    }

    // ---- walking ----

    /** Reads the next record's length at {@link #p}, moving past it; returns where the record ends. */
    private int recordEnd() {
        if (index >= count) {
            throw new IllegalStateException("no record left in the batch at base offset " + baseOffset);
        }
        int length = readVarint(end);
        if (length < 0 || length > end - p) {
            throw malformed("record " + index + " of " + length + " bytes runs past the end of its batch");
        }
        return p + length;
    }

    private void consumed() {
        index++;
        if (index == count && p != end) {
            throw malformed((end - p) + " bytes left after the batch's " + count + " records");
        }
    }

    /** Moves past {@code length} bytes at {@link #p}; a length below {@code min} or past {@code limit} is malformed. */
    private int skip(int length, int min, int limit, String what) {
        if (length == -1 && min == 0) {
            throw malformed("record " + index + " has a null " + what + " (Sluice stores every value: no tombstones)");
        }
        if (length < min || length > limit - p) {
            throw malformed("record " + index + " has a " + what + " of " + length + " bytes in the "
                    + (limit - p) + " bytes left of it");
        }
        return p + Math.max(0, length);
    }

    /** A zig-zag varint of at most 5 bytes at {@link #p}, not past {@code limit}. */
    private int readVarint(int limit) {
        return (int) readZigZag(limit, 5, "varint");
    }

    /** A zig-zag varlong of at most 10 bytes at {@link #p}, not past {@code limit}. */
    private long readVarlong(int limit) {
        return readZigZag(limit, 10, "varlong");
    }

    private long readZigZag(int limit, int maxBytes, String what) {
        long value = 0;
        int shift = 0;
        long b;
        do {
            if (shift >= 7 * maxBytes) {
                throw malformed("record " + index + ": " + what + " longer than " + maxBytes + " bytes");
            }
            if (p >= limit) {
                throw malformed("record " + index + ": " + what + " runs past the end of its record");
            }
            b = buffer.get(p++);
            value |= (b & 0x7f) << shift;
            shift += 7;
        } while ((b & 0x80) != 0);
        return (value >>> 1) ^ -(value & 1);
    }

    private MalformedBatchException malformed(String message) {
        return new MalformedBatchException(baseOffset, message);
    }
}
