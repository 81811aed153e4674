package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.Header;
import io.sluice.core.SluiceException;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Reads the record batches a FETCH v1 response carries: Kafka's RecordBatch v2 (magic 2, big-endian, CRC32C), the
 * bytes the broker's journal stores, laid out in docs/journal-format.md. Each batch's framing (magic, length,
 * record count, record lengths) and CRC32C are checked before any of its records is returned; a damaged batch is a
 * {@link DamagedBatchException} naming the offset it claims.
 *
 * <pre>
 *  0          8            12           16    17    21           23                 27             35            43
 *  | base     | batch      | partition  |magic| crc | attributes | last offset delta | base         | max          |
 *  | offset   | length     | leader     | =2  | u32 | i16        | i32               | timestamp    | timestamp    |
 *  | i64      | i32        | epoch i32  | i8  |     |            |                   | i64          | i64          |
 *  43            51         53          57        61
 *  | producer id | producer | base      | records | records ...
 *  | i64         | epoch i16| seq i32   | i32     |
 *
 *  record: length varint | attributes i8 | timestampDelta varlong | offsetDelta varint
 *          | keyLength varint (-1: null) | key | valueLength varint | value
 *          | headerCount varint | headerCount × (keyLength varint | UTF-8 key | valueLength varint | value)
 * </pre>
 * {@code batch length} counts the bytes after itself; the CRC covers attributes to the end of the batch.
 *
 * <p>Why a second reader beside the journal's {@code RecordBatchCodec.Cursor} (broker-core): that one walks
 * Chronicle's mapped {@code Bytes} in place, this one a Netty {@link ByteBuf}; sluice-client must not depend on
 * broker-core (or Chronicle), and a shared {@code ByteBuffer} reader would make the embedded consumer wrap every
 * mapped document in a {@code ByteBuffer} first. Both follow the same diagram and are tested against each other's
 * output (the broker writes with the codec, network tests read with this class).
 *
 * <p>Single-threaded and reusable; allocates only the records it returns (and, once, a scratch array as large as the
 * largest batch of a buffer without a backing array).
 */
public final class RecordBatchReader {
    public static final byte MAGIC = 2;
    static final int BATCH_LENGTH_OFFSET = 8;
    static final int MAGIC_OFFSET = 16;
    static final int CRC_OFFSET = 17;
    static final int ATTRIBUTES_OFFSET = 21;
    static final int LAST_OFFSET_DELTA_OFFSET = 23;
    static final int BASE_TIMESTAMP_OFFSET = 27;
    static final int MAX_TIMESTAMP_OFFSET = 35;
    static final int PRODUCER_ID_OFFSET = 43;
    static final int RECORDS_COUNT_OFFSET = 57;
    /** Bytes before the first record. */
    public static final int HEADER_SIZE = 61;
    /** Base offset and batch length: the bytes {@code batch length} does not count. */
    public static final int LOG_OVERHEAD = 12;

    /** A batch failed its framing or CRC32C check. */
    public static final class DamagedBatchException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final long baseOffset;

        DamagedBatchException(long baseOffset, String message) {
            super(message);
            this.baseOffset = baseOffset;
        }

        /** The base offset the damaged batch claims (-1 when not even that could be read). */
        public long baseOffset() {
            return baseOffset;
        }
    }

    private final CRC32C crc = new CRC32C();
    /** Batches of buffers without a backing array are copied here to be walked; grows to the largest batch seen. */
    private byte[] scratch = new byte[0];
    /** Set by {@link #array}: index {@code i} of the ByteBuf is index {@code i + arrayShift} of the array it returned. */
    private int arrayShift;

    /**
     * Decodes every batch in {@code in}'s readable bytes (consuming them), handing {@code out} the records at or after
     * {@code fromOffset} in offset order; records before it (the first batch may start earlier) are skipped without
     * being decoded.
     *
     * @return the number of records added
     * @throws DamagedBatchException at the first damaged batch; records of earlier batches are already in {@code out}
     */
    public int readAll(ByteBuf in, String topic, int partition, long fromOffset, List<ConsumerRecord> out) {
        int added = 0;
        while (in.isReadable()) {
            added += readBatch(in, topic, partition, fromOffset, out);
        }
        return added;
    }

    /** Decodes one batch at the reader index and moves past it; see {@link #readAll}. */
    public int readBatch(ByteBuf in, String topic, int partition, long fromOffset, List<ConsumerRecord> out) {
        int start = in.readerIndex();
        int end = checkHeader(in, start, in.readableBytes());
        long baseOffset = in.getLong(start);
        long baseTimestamp = in.getLong(start + BASE_TIMESTAMP_OFFSET);
        int count = in.getInt(start + RECORDS_COUNT_OFFSET);
        byte[] a = array(in, start, end);
        int shift = arrayShift;
        int added = 0;
        int p = start + HEADER_SIZE + shift;
        int limit = end + shift;
        try {
            for (int i = 0; i < count; i++) {
                int recordEnd = recordEnd(a, p, limit, baseOffset, i);
                p = skipVarint(a, p, limit);
                if (baseOffset + i >= fromOffset) {
                    out.add(readRecord(a, p, recordEnd, topic, partition, baseOffset, baseTimestamp, i));
                    added++;
                }
                p = recordEnd;
            }
        } catch (IndexOutOfBoundsException | IllegalStateException e) {
            throw new DamagedBatchException(baseOffset, "malformed record: " + e.getMessage());
        }
        if (p != limit) {
            throw new DamagedBatchException(baseOffset, (limit - p) + " bytes left after the batch's " + count + " records");
        }
        in.readerIndex(end);
        return added;
    }

    /**
     * The bytes of {@code in[start, end)} as an array: {@code in}'s own when it has one, else copied once into this
     * reader's scratch array (one bulk copy per batch, so the record walk reads a plain array, not a ByteBuf a byte at
     * a time). Index {@code i} of {@code in} is index {@code i + arrayShift} of the result.
     */
    private byte[] array(ByteBuf in, int start, int end) {
        if (in.hasArray()) {
            arrayShift = in.arrayOffset();
            return in.array();
        }
        int length = end - start;
        if (scratch.length < length) {
            scratch = new byte[(int) Math.max(length, Math.min(Integer.MAX_VALUE - 8, scratch.length * 2L))];
        }
        in.getBytes(start, scratch, 0, length);
        arrayShift = -start;
        return scratch;
    }

    /**
     * The broker's check of a PRODUCE v1 batch (the {@code length} bytes at {@code start}), before it is stored as it
     * is: exactly one whole batch; magic 2; attributes 0 (no compression, CreateTime, not transactional, not a control
     * batch) with producer id, epoch and base sequence -1 (no idempotence); at least one record; the CRC32C; then every
     * record: lengths inside the record, attributes 0, offset deltas 0, 1, 2, …, a value (not null), header keys and
     * values not null, a record size ({@link io.sluice.core.ProducerRecord#serializedSize()}'s measure: 26 bytes
     * + key + value + 6 + key + value per header) of at most {@code maxEventSize}, and a max timestamp equal to the
     * largest record timestamp. Nothing is allocated.
     *
     * @return the number of records
     * @throws ProtocolException for anything malformed ({@code INVALID_REQUEST}), with what and where
     * @throws SluiceException.RecordTooLargeException for a record above {@code maxEventSize}
     */
    public int checkProduced(ByteBuf in, int start, int length, int maxEventSize) {
        int end;
        try {
            end = checkHeader(in, start, length);
        } catch (DamagedBatchException e) {
            throw new ProtocolException("record batch: " + e.getMessage());
        }
        if (end != start + length) {
            throw new ProtocolException("record batch of " + (end - start) + " bytes in " + length + " bytes: one batch per request");
        }
        short attributes = in.getShort(start + ATTRIBUTES_OFFSET);
        if (attributes != 0 || in.getLong(start + PRODUCER_ID_OFFSET) != -1 || in.getShort(start + PRODUCER_ID_OFFSET + 8) != -1
                || in.getInt(start + PRODUCER_ID_OFFSET + 10) != -1) {
            throw new ProtocolException("record batch attributes " + attributes + " with producer id/epoch/sequence set:"
                    + " Sluice stores uncompressed, non-transactional, non-idempotent batches only (attributes 0, ids -1)");
        }
        int count = in.getInt(start + RECORDS_COUNT_OFFSET);
        if (count < 1) {
            throw new ProtocolException("record batch with " + count + " records");
        }
        long baseTimestamp = in.getLong(start + BASE_TIMESTAMP_OFFSET);
        long maxTimestamp = Long.MIN_VALUE;
        byte[] a = array(in, start, end);
        int shift = arrayShift;
        int p = start + HEADER_SIZE + shift;
        int limit = end + shift;
        try {
            for (int i = 0; i < count; i++) {
                int recordEnd = recordEnd(a, p, limit, -1, i);
                p = skipVarint(a, p, recordEnd);
                if (p >= recordEnd || a[p] != 0) {
                    throw new IllegalStateException("record " + i + " has attributes " + (p < recordEnd ? a[p] : "missing"));
                }
                p++;
                maxTimestamp = Math.max(maxTimestamp, baseTimestamp + readVarlong(a, p, recordEnd));
                p = skipVarint(a, p, recordEnd);
                int offsetDelta = readVarint(a, p, recordEnd);
                if (offsetDelta != i) {
                    throw new IllegalStateException("record " + i + " has offset delta " + offsetDelta);
                }
                p = skipVarint(a, p, recordEnd);
                int keyLength = readVarint(a, p, recordEnd);
                p = skip(a, p, keyLength, recordEnd, -1, "key");
                int valueLength = readVarint(a, p, recordEnd);
                p = skip(a, p, valueLength, recordEnd, 0, "value");
                long size = 26L + Math.max(0, keyLength) + valueLength;
                int headerCount = readVarint(a, p, recordEnd);
                p = skipVarint(a, p, recordEnd);
                if (headerCount < 0 || headerCount > recordEnd - p) {
                    throw new IllegalStateException("header count " + headerCount);
                }
                for (int h = 0; h < headerCount; h++) {
                    int kl = readVarint(a, p, recordEnd);
                    p = skip(a, p, kl, recordEnd, 0, "header key");
                    int vl = readVarint(a, p, recordEnd);
                    p = skip(a, p, vl, recordEnd, 0, "header value");
                    size += 6L + kl + vl;
                }
                if (p != recordEnd) {
                    throw new IllegalStateException("record " + i + " ends " + (recordEnd - p) + " bytes before its length says");
                }
                if (size > maxEventSize) {
                    throw new SluiceException.RecordTooLargeException("record " + i + " of " + size
                            + " bytes exceeds maxEventSize=" + maxEventSize + "; nothing of the batch was written");
                }
            }
        } catch (IndexOutOfBoundsException | IllegalStateException | DamagedBatchException e) {
            throw new ProtocolException("record batch: malformed record: " + e.getMessage());
        }
        if (p != limit) {
            throw new ProtocolException("record batch: " + (limit - p) + " bytes left after its " + count + " records");
        }
        long statedMax = in.getLong(start + MAX_TIMESTAMP_OFFSET);
        if (statedMax != maxTimestamp) {
            throw new ProtocolException("record batch: max timestamp " + statedMax + " but its records' largest is " + maxTimestamp);
        }
        return count;
    }

    /**
     * Checks the header of the batch at {@code start} ({@code available} bytes there): size, magic, length, count
     * against the last offset delta, CRC32C.
     *
     * @return the index one past the batch's end
     */
    private int checkHeader(ByteBuf in, int start, int available) {
        long baseOffset = available >= 8 ? in.getLong(start) : -1;
        if (available < HEADER_SIZE) {
            throw new DamagedBatchException(baseOffset, "batch of " + available + " bytes is shorter than its "
                    + HEADER_SIZE + "-byte header");
        }
        byte magic = in.getByte(start + MAGIC_OFFSET);
        if (magic != MAGIC) {
            throw new DamagedBatchException(baseOffset, "magic " + magic + ", expected " + MAGIC);
        }
        int length = in.getInt(start + BATCH_LENGTH_OFFSET);
        if (length < HEADER_SIZE - LOG_OVERHEAD || length > available - LOG_OVERHEAD) {
            throw new DamagedBatchException(baseOffset, "batch length " + length + " does not fit the " + available
                    + " bytes received");
        }
        int end = start + LOG_OVERHEAD + length;
        int count = in.getInt(start + RECORDS_COUNT_OFFSET);
        int lastDelta = in.getInt(start + LAST_OFFSET_DELTA_OFFSET);
        if (count < 0 || (count > 0 && lastDelta != count - 1)) {
            throw new DamagedBatchException(baseOffset, "record count " + count + " disagrees with last offset delta " + lastDelta);
        }
        long stored = in.getInt(start + CRC_OFFSET) & 0xFFFF_FFFFL;
        crc.reset();
        crc.update(in.nioBuffer(start + ATTRIBUTES_OFFSET, end - start - ATTRIBUTES_OFFSET));
        long actual = crc.getValue();
        if (stored != actual) {
            throw new DamagedBatchException(baseOffset, "CRC32C mismatch: stored " + Long.toHexString(stored)
                    + ", computed " + Long.toHexString(actual));
        }
        return end;
    }

    /** Reads record {@code index}'s length at {@code p}; returns where the record ends, checked against {@code end}. */
    private static int recordEnd(byte[] a, int p, int end, long baseOffset, int index) {
        int recordLength = readVarint(a, p, end);
        int recordEnd = skipVarint(a, p, end) + recordLength;
        if (recordLength < 0 || recordEnd > end || recordEnd < p) {
            throw new DamagedBatchException(baseOffset, "record " + index + " of " + recordLength
                    + " bytes runs past the end of its batch");
        }
        return recordEnd;
    }

    /** Moves past a length field at {@code p} and the {@code length} bytes after it; a length below {@code min} is malformed. */
    private static int skip(byte[] a, int p, int length, int limit, int min, String what) {
        if (length < min) {
            throw new IllegalStateException(what + " length " + length);
        }
        p = skipVarint(a, p, limit);
        if (length > limit - p) {
            throw new IllegalStateException(what + " of " + length + " bytes runs past the end of its record");
        }
        return p + Math.max(0, length);
    }

    private static ConsumerRecord readRecord(byte[] a, int p, int recordEnd, String topic, int partition,
                                             long baseOffset, long baseTimestamp, int index) {
        p += 1; // attributes
        long timestampDelta = readVarlong(a, p, recordEnd);
        p = skipVarint(a, p, recordEnd);
        int offsetDelta = readVarint(a, p, recordEnd);
        p = skipVarint(a, p, recordEnd);
        if (offsetDelta != index) {
            throw new IllegalStateException("record " + index + " has offset delta " + offsetDelta);
        }
        int keyLength = readVarint(a, p, recordEnd);
        p = skipVarint(a, p, recordEnd);
        byte[] key = null;
        if (keyLength >= 0) {
            key = bytes(a, p, keyLength, recordEnd);
            p += keyLength;
        } else if (keyLength != -1) {
            throw new IllegalStateException("key length " + keyLength);
        }
        int valueLength = readVarint(a, p, recordEnd);
        p = skipVarint(a, p, recordEnd);
        if (valueLength < 0) {
            throw new IllegalStateException("value length " + valueLength);
        }
        byte[] value = bytes(a, p, valueLength, recordEnd);
        p += valueLength;
        int headerCount = readVarint(a, p, recordEnd);
        p = skipVarint(a, p, recordEnd);
        if (headerCount < 0 || headerCount > recordEnd - p) {
            throw new IllegalStateException("header count " + headerCount);
        }
        List<Header> headers = List.of();
        if (headerCount > 0) {
            headers = new ArrayList<>(headerCount);
            for (int h = 0; h < headerCount; h++) {
                int kl = readVarint(a, p, recordEnd);
                p = skipVarint(a, p, recordEnd);
                if (kl < 0) {
                    throw new IllegalStateException("header key length " + kl);
                }
                String k = new String(bytes(a, p, kl, recordEnd), StandardCharsets.UTF_8);
                p += kl;
                int vl = readVarint(a, p, recordEnd);
                p = skipVarint(a, p, recordEnd);
                if (vl < 0) {
                    throw new IllegalStateException("header value length " + vl);
                }
                headers.add(new Header(k, bytes(a, p, vl, recordEnd)));
                p += vl;
            }
        }
        if (p != recordEnd) {
            throw new IllegalStateException("record " + index + " ends " + (recordEnd - p) + " bytes before its length says");
        }
        return new ConsumerRecord(topic, partition, baseOffset + offsetDelta, baseTimestamp + timestampDelta, key, value, headers);
    }

    private static byte[] bytes(byte[] a, int p, int length, int limit) {
        if (length > limit - p) {
            throw new IllegalStateException(length + " bytes run past the end of their record");
        }
        return Arrays.copyOfRange(a, p, p + length);
    }

    private static int skipVarint(byte[] a, int p, int limit) {
        for (int i = 0; i < 10; i++) {
            if (p >= limit) {
                throw new IllegalStateException("varint runs past the end of its record");
            }
            if ((a[p++] & 0x80) == 0) {
                return p;
            }
        }
        throw new IllegalStateException("varint longer than 10 bytes");
    }

    private static int readVarint(byte[] a, int p, int limit) {
        int value = 0;
        int shift = 0;
        int b;
        do {
            if (shift > 28) {
                throw new IllegalStateException("varint longer than 5 bytes");
            }
            if (p >= limit) {
                throw new IllegalStateException("varint runs past the end of its record");
            }
            b = a[p++];
            value |= (b & 0x7f) << shift;
            shift += 7;
        } while ((b & 0x80) != 0);
        return (value >>> 1) ^ -(value & 1);
    }

    private static long readVarlong(byte[] a, int p, int limit) {
        long value = 0;
        int shift = 0;
        long b;
        do {
            if (shift > 63) {
                throw new IllegalStateException("varlong longer than 10 bytes");
            }
            if (p >= limit) {
                throw new IllegalStateException("varlong runs past the end of its record");
            }
            b = a[p++];
            value |= (b & 0x7f) << shift;
            shift += 7;
        } while ((b & 0x80) != 0);
        return (value >>> 1) ^ -(value & 1);
    }
}
