package io.sluice.core.internal.journal;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.Header;
import net.openhft.chronicle.bytes.Bytes;

import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Kafka's RecordBatch v2 (magic 2), the unit the journal stores: one Chronicle document holds one batch. Big-endian
 * like Kafka, so a Kafka-protocol front could serve the bytes as they are. Full diagram in docs/journal-format.md.
 *
 * <pre>
 *  0          8            12                     16     17     21          23                27
 *  +----------+------------+----------------------+------+------+-----------+-----------------+
 *  | base     | batch      | partition            | magic| crc  | attributes| last offset     |
 *  | offset   | length     | leader epoch (-1)    |  =2  | u32  |  i16 (0)  | delta  i32      |
 *  | i64      | i32        | i32                  |  i8  |      |           |                 |
 *  +----------+------------+----------------------+------+------+-----------+-----------------+
 *  27              35              43             51       53          57        61
 *  +---------------+---------------+--------------+--------+-----------+---------+---------...
 *  | base timestamp| max timestamp | producer id  |producer| base      | records | records
 *  | i64           | i64           | i64 (-1)     |epoch -1| seq i32 -1| i32     |
 *  +---------------+---------------+--------------+--------+-----------+---------+---------...
 *
 *  record: length varint | attributes i8 (0) | timestampDelta varlong | offsetDelta varint
 *          | keyLength varint (-1: null) | key | valueLength varint | value
 *          | headerCount varint | headerCount × (keyLength varint | UTF-8 key | valueLength varint | value)
 * </pre>
 *
 * {@code batch length} counts the bytes after itself (from partition leader epoch to the end); the CRC32C covers
 * attributes to the end, so the base offset can be rewritten without recomputing it. Varints are zig-zag encoded as
 * in Kafka (protobuf's {@code sint32}/{@code sint64}).
 *
 * <p>Encoding ({@link Writer}) writes straight into the Chronicle document's bytes and allocates nothing; decoding
 * ({@link Cursor}) allocates only the records it returns. Both are single-threaded and reusable.
 */
public final class RecordBatchCodec {
    public static final byte MAGIC = 2;

    public static final int BASE_OFFSET_OFFSET = 0;
    public static final int BATCH_LENGTH_OFFSET = 8;
    public static final int PARTITION_LEADER_EPOCH_OFFSET = 12;
    public static final int MAGIC_OFFSET = 16;
    public static final int CRC_OFFSET = 17;
    public static final int ATTRIBUTES_OFFSET = 21;
    public static final int LAST_OFFSET_DELTA_OFFSET = 23;
    public static final int BASE_TIMESTAMP_OFFSET = 27;
    public static final int MAX_TIMESTAMP_OFFSET = 35;
    public static final int PRODUCER_ID_OFFSET = 43;
    public static final int PRODUCER_EPOCH_OFFSET = 51;
    public static final int BASE_SEQUENCE_OFFSET = 53;
    public static final int RECORDS_COUNT_OFFSET = 57;
    /** Bytes before the first record. */
    public static final int HEADER_SIZE = 61;
    /** Base offset and batch length: the bytes {@code batch length} does not count. */
    public static final int LOG_OVERHEAD = 12;

    /**
     * Default upper bound of one batch in bytes: the journal writer closes a document before a record would take it
     * past this (a single larger record still gets a batch of its own).
     */
    public static final int DEFAULT_MAX_BATCH_BYTES = 1 << 20;

    /** Chronicle Bytes use the platform's order; Kafka's batches are big-endian. */
    private static final boolean SWAP = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    private RecordBatchCodec() {
    }

    // ---- header fields, absolute reads ----

    public static long baseOffset(Bytes<?> in, long batchStart) {
        return readLongBE(in, batchStart + BASE_OFFSET_OFFSET);
    }

    public static int batchLength(Bytes<?> in, long batchStart) {
        return readIntBE(in, batchStart + BATCH_LENGTH_OFFSET);
    }

    public static byte magic(Bytes<?> in, long batchStart) {
        return in.readByte(batchStart + MAGIC_OFFSET);
    }

    public static int recordCount(Bytes<?> in, long batchStart) {
        return readIntBE(in, batchStart + RECORDS_COUNT_OFFSET);
    }

    public static int lastOffsetDelta(Bytes<?> in, long batchStart) {
        return readIntBE(in, batchStart + LAST_OFFSET_DELTA_OFFSET);
    }

    public static long baseTimestamp(Bytes<?> in, long batchStart) {
        return readLongBE(in, batchStart + BASE_TIMESTAMP_OFFSET);
    }

    public static long maxTimestamp(Bytes<?> in, long batchStart) {
        return readLongBE(in, batchStart + MAX_TIMESTAMP_OFFSET);
    }

    public static long storedCrc(Bytes<?> in, long batchStart) {
        return readIntBE(in, batchStart + CRC_OFFSET) & 0xFFFF_FFFFL;
    }

    /** Rewrites the base offset in place (outside the CRC), as a broker assigning offsets would. */
    public static void rewriteBaseOffset(Bytes<?> out, long batchStart, long baseOffset) {
        writeLongBE(out, batchStart + BASE_OFFSET_OFFSET, baseOffset);
    }

    /**
     * Checks the framing of the batch at {@code batchStart} that the container says is {@code available} bytes long:
     * magic 2, a batch length that fits, a non-negative record count. Returns null if sound, else what is wrong.
     */
    public static String checkFraming(Bytes<?> in, long batchStart, long available) {
        if (available < HEADER_SIZE) {
            return "batch of " + available + " bytes is shorter than its " + HEADER_SIZE + "-byte header";
        }
        byte magic = magic(in, batchStart);
        if (magic != MAGIC) {
            return "magic " + magic + ", expected " + MAGIC;
        }
        int length = batchLength(in, batchStart);
        if (length < HEADER_SIZE - LOG_OVERHEAD || length + LOG_OVERHEAD > available) {
            return "batch length " + length + " does not fit the " + available + " bytes stored";
        }
        int count = recordCount(in, batchStart);
        if (count < 0 || (count > 0 && lastOffsetDelta(in, batchStart) != count - 1)) {
            return "record count " + count + " disagrees with last offset delta " + lastOffsetDelta(in, batchStart);
        }
        return null;
    }

    // ---- CRC32C over attributes..end ----

    /** Computes CRC32C over {@code [from, to)} of {@code in}, copying through {@code scratch}. */
    static long crc32c(CRC32C crc, byte[] scratch, Bytes<?> in, long from, long to) {
        crc.reset();
        long p = from;
        while (p < to) {
            int n = (int) Math.min(scratch.length, to - p);
            in.read(p, scratch, 0, n);
            crc.update(scratch, 0, n);
            p += n;
        }
        return crc.getValue();
    }

    // ---- varints (Kafka's ByteUtils, zig-zag) ----

    static int sizeOfVarint(int value) {
        int v = (value << 1) ^ (value >> 31);
        int bytes = 1;
        while ((v & 0xffffff80) != 0L) {
            bytes += 1;
            v >>>= 7;
        }
        return bytes;
    }

    static int sizeOfVarlong(long value) {
        long v = (value << 1) ^ (value >> 63);
        int bytes = 1;
        while ((v & 0xffffffffffffff80L) != 0L) {
            bytes += 1;
            v >>>= 7;
        }
        return bytes;
    }

    static void writeVarint(Bytes<?> out, int value) {
        int v = (value << 1) ^ (value >> 31);
        while ((v & 0xffffff80) != 0L) {
            out.writeByte((byte) ((v & 0x7f) | 0x80));
            v >>>= 7;
        }
        out.writeByte((byte) v);
    }

    static void writeVarlong(Bytes<?> out, long value) {
        long v = (value << 1) ^ (value >> 63);
        while ((v & 0xffffffffffffff80L) != 0L) {
            out.writeByte((byte) ((v & 0x7f) | 0x80));
            v >>>= 7;
        }
        out.writeByte((byte) v);
    }

    /** UTF-8 length of {@code s} without encoding it (unpaired surrogates count as '?', as String.getBytes does). */
    static int utf8Length(String s) {
        int n = s.length();
        int bytes = 0;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                bytes++;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                bytes += 4;
                i++;
            } else if (Character.isSurrogate(c)) {
                bytes += 1;
            } else {
                bytes += 3;
            }
        }
        return bytes;
    }

    static void writeUtf8(Bytes<?> out, String s) {
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                out.writeByte((byte) c);
            } else if (c < 0x800) {
                out.writeByte((byte) (0xC0 | (c >> 6)));
                out.writeByte((byte) (0x80 | (c & 0x3F)));
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                int cp = Character.toCodePoint(c, s.charAt(++i));
                out.writeByte((byte) (0xF0 | (cp >> 18)));
                out.writeByte((byte) (0x80 | ((cp >> 12) & 0x3F)));
                out.writeByte((byte) (0x80 | ((cp >> 6) & 0x3F)));
                out.writeByte((byte) (0x80 | (cp & 0x3F)));
            } else if (Character.isSurrogate(c)) {
                out.writeByte((byte) '?');
            } else {
                out.writeByte((byte) (0xE0 | (c >> 12)));
                out.writeByte((byte) (0x80 | ((c >> 6) & 0x3F)));
                out.writeByte((byte) (0x80 | (c & 0x3F)));
            }
        }
    }

    /** An upper bound of the bytes one record adds to a batch, cheap enough to call before encoding it. */
    public static int maxRecordSize(int keyLength, int valueLength, List<Header> headers) {
        int size = 5 + 1 + 10 + 5 + 5 + Math.max(0, keyLength) + 5 + valueLength + 5;
        if (headers != null) {
            for (int i = 0; i < headers.size(); i++) {
                Header h = headers.get(i);
                size += 5 + 3 * h.key().length() + 5 + h.value().length;
            }
        }
        return size;
    }

    private static int readIntBE(Bytes<?> in, long at) {
        int v = in.readInt(at);
        return SWAP ? Integer.reverseBytes(v) : v;
    }

    private static long readLongBE(Bytes<?> in, long at) {
        long v = in.readLong(at);
        return SWAP ? Long.reverseBytes(v) : v;
    }

    private static void writeIntBE(Bytes<?> out, long at, int v) {
        out.writeInt(at, SWAP ? Integer.reverseBytes(v) : v);
    }

    private static void writeShortBE(Bytes<?> out, long at, short v) {
        out.writeShort(at, SWAP ? Short.reverseBytes(v) : v);
    }

    private static void writeLongBE(Bytes<?> out, long at, long v) {
        out.writeLong(at, SWAP ? Long.reverseBytes(v) : v);
    }

    /**
     * Builds one batch in place: {@link #begin}, {@link #append} per record, {@link #finish}. Single-threaded,
     * reusable, allocation-free.
     */
    public static final class Writer {
        private final CRC32C crc = new CRC32C();
        private final byte[] scratch = new byte[8192];
        private Bytes<?> out;
        private long start = -1;
        private int count;
        private long baseTimestamp;
        private long maxTimestamp;

        /** Starts a batch at {@code out}'s write position; the header is filled in by {@link #finish}. */
        public void begin(Bytes<?> out) {
            this.out = out;
            this.start = out.writePosition();
            this.count = 0;
            this.baseTimestamp = 0;
            this.maxTimestamp = Long.MIN_VALUE;
            for (int i = 0; i < HEADER_SIZE; i++) {
                out.writeByte((byte) 0);
            }
        }

        /** Records appended since {@link #begin}. */
        public int count() {
            return count;
        }

        /** Bytes of the batch so far, header included. */
        public long size() {
            return start < 0 ? 0 : out.writePosition() - start;
        }

        /**
         * Appends one record with offset delta {@link #count()}. If encoding fails (a bad header, say) the batch is
         * left as it was before the call and the exception propagates.
         *
         * @param keyLength -1 for a null key
         */
        public void append(long timestamp, byte[] key, int keyLength, byte[] value, int valueLength, List<Header> headers) {
            long recordStart = out.writePosition();
            try {
                if (count == 0) {
                    baseTimestamp = timestamp;
                }
                long timestampDelta = timestamp - baseTimestamp;
                int offsetDelta = count;
                int headerCount = headers.size();
                int body = 1 + sizeOfVarlong(timestampDelta) + sizeOfVarint(offsetDelta)
                        + sizeOfVarint(keyLength) + Math.max(0, keyLength)
                        + sizeOfVarint(valueLength) + valueLength
                        + sizeOfVarint(headerCount);
                for (int i = 0; i < headerCount; i++) {
                    Header h = headers.get(i);
                    int k = utf8Length(h.key());
                    int v = h.value().length;
                    body += sizeOfVarint(k) + k + sizeOfVarint(v) + v;
                }
                writeVarint(out, body);
                out.writeByte((byte) 0);
                writeVarlong(out, timestampDelta);
                writeVarint(out, offsetDelta);
                writeVarint(out, keyLength);
                if (keyLength > 0) {
                    out.write(key, 0, keyLength);
                }
                writeVarint(out, valueLength);
                out.write(value, 0, valueLength);
                writeVarint(out, headerCount);
                for (int i = 0; i < headerCount; i++) {
                    Header h = headers.get(i);
                    writeVarint(out, utf8Length(h.key()));
                    writeUtf8(out, h.key());
                    writeVarint(out, h.value().length);
                    out.write(h.value());
                }
            } catch (RuntimeException e) {
                out.writePosition(recordStart);
                throw e;
            }
            if (timestamp > maxTimestamp) {
                maxTimestamp = timestamp;
            }
            count++;
        }

        /** Fills in the header (base offset, length, count, timestamps, CRC32C). Returns the batch's size in bytes. */
        public long finish(long baseOffset) {
            long end = out.writePosition();
            long size = end - start;
            writeLongBE(out, start + BASE_OFFSET_OFFSET, baseOffset);
            writeIntBE(out, start + BATCH_LENGTH_OFFSET, (int) (size - LOG_OVERHEAD));
            writeIntBE(out, start + PARTITION_LEADER_EPOCH_OFFSET, -1);
            out.writeByte(start + MAGIC_OFFSET, MAGIC);
            writeShortBE(out, start + ATTRIBUTES_OFFSET, (short) 0);
            writeIntBE(out, start + LAST_OFFSET_DELTA_OFFSET, count - 1);
            writeLongBE(out, start + BASE_TIMESTAMP_OFFSET, baseTimestamp);
            writeLongBE(out, start + MAX_TIMESTAMP_OFFSET, count == 0 ? -1 : maxTimestamp);
            writeLongBE(out, start + PRODUCER_ID_OFFSET, -1L);
            writeShortBE(out, start + PRODUCER_EPOCH_OFFSET, (short) -1);
            writeIntBE(out, start + BASE_SEQUENCE_OFFSET, -1);
            writeIntBE(out, start + RECORDS_COUNT_OFFSET, count);
            long crcValue = crc32c(crc, scratch, out, start + ATTRIBUTES_OFFSET, end);
            writeIntBE(out, start + CRC_OFFSET, (int) crcValue);
            start = -1;
            this.out = null;
            return size;
        }

        /** Forgets the batch begun (the caller rolls back the document that held it). */
        public void abandon() {
            start = -1;
            out = null;
        }
    }

    /**
     * Walks the records of one batch. {@link #open} checks framing and, if asked, the CRC; then {@link #next} or
     * {@link #skip} per record. Single-threaded, reusable.
     */
    public static final class Cursor {
        private final CRC32C crc = new CRC32C();
        private final byte[] scratch = new byte[8192];
        private Bytes<?> in;
        private long pos;
        private long end;
        private long baseOffset;
        private long baseTimestamp;
        private int remaining;
        private int recordCount;

        /**
         * Positions on the batch at {@code [start, start + available)}.
         *
         * @return null if the batch is sound, else what is wrong with it (framing or CRC)
         */
        public String open(Bytes<?> in, long start, long available, boolean verifyCrc) {
            this.in = in;
            String framing = checkFraming(in, start, available);
            if (framing != null) {
                this.remaining = 0;
                return framing;
            }
            this.end = start + LOG_OVERHEAD + batchLength(in, start);
            if (verifyCrc) {
                long stored = storedCrc(in, start);
                long actual = crc32c(crc, scratch, in, start + ATTRIBUTES_OFFSET, end);
                if (stored != actual) {
                    this.remaining = 0;
                    return "CRC32C mismatch: stored " + Long.toHexString(stored) + ", computed " + Long.toHexString(actual);
                }
            }
            this.baseOffset = RecordBatchCodec.baseOffset(in, start);
            this.baseTimestamp = RecordBatchCodec.baseTimestamp(in, start);
            this.recordCount = RecordBatchCodec.recordCount(in, start);
            this.remaining = recordCount;
            this.pos = start + HEADER_SIZE;
            return null;
        }

        public long baseOffset() {
            return baseOffset;
        }

        public int recordCount() {
            return recordCount;
        }

        /** One past the last offset of the batch. */
        public long nextOffset() {
            return baseOffset + recordCount;
        }

        public boolean hasNext() {
            return remaining > 0;
        }

        /** Offset of the next record without consuming it. */
        public long peekOffset() {
            long p = pos;
            p = skipVarint(p); // length
            p += 1; // attributes
            p = skipVarint(p); // timestamp delta
            return baseOffset + readVarint(p);
        }

        /** Skips the next record; returns its offset. */
        public long skip() {
            long offset = peekOffset();
            int length = readVarint(pos);
            pos = skipVarint(pos) + length;
            remaining--;
            checkInside();
            return offset;
        }

        /**
         * Skips the next {@code n} records by their length prefixes alone, one varint each: how a read by offset gets
         * to its record inside a batch (offsets are dense in a batch; the caller checks the offset of the record it
         * then decodes). {@link #skip()} decodes three varints per record to report its offset.
         */
        public void skip(int n) {
            if (n > remaining) {
                throw new IllegalStateException("cannot skip " + n + " records, " + remaining + " left in the batch");
            }
            long p = pos;
            for (int i = 0; i < n; i++) {
                int raw = 0;
                int shift = 0;
                int b;
                do {
                    if (shift > 28) {
                        throw new IllegalStateException("varint longer than 5 bytes");
                    }
                    b = in.readByte(p++);
                    raw |= (b & 0x7f) << shift;
                    shift += 7;
                } while ((b & 0x80) != 0);
                p += (raw >>> 1) ^ -(raw & 1);
                if (p > end) {
                    throw new IllegalStateException("records run past the end of their batch");
                }
            }
            pos = p;
            remaining -= n;
        }

        /** Decodes the next record. */
        public ConsumerRecord next(String topic, int partition) {
            int length = readVarint(pos);
            long p = skipVarint(pos);
            long recordEnd = p + length;
            p += 1; // attributes
            long timestampDelta = readVarlong(p);
            p = skipVarint(p);
            int offsetDelta = readVarint(p);
            p = skipVarint(p);
            int keyLength = readVarint(p);
            p = skipVarint(p);
            byte[] key = null;
            if (keyLength >= 0) {
                key = new byte[keyLength];
                in.read(p, key, 0, keyLength);
                p += keyLength;
            }
            int valueLength = readVarint(p);
            p = skipVarint(p);
            byte[] value = new byte[Math.max(0, valueLength)];
            in.read(p, value, 0, value.length);
            p += value.length;
            int headerCount = readVarint(p);
            p = skipVarint(p);
            List<Header> headers = List.of();
            if (headerCount > 0) {
                headers = new ArrayList<>(headerCount);
                for (int i = 0; i < headerCount; i++) {
                    int kl = readVarint(p);
                    p = skipVarint(p);
                    byte[] k = new byte[kl];
                    in.read(p, k, 0, kl);
                    p += kl;
                    int vl = readVarint(p);
                    p = skipVarint(p);
                    byte[] v = new byte[Math.max(0, vl)];
                    in.read(p, v, 0, v.length);
                    p += v.length;
                    headers.add(new Header(new String(k, StandardCharsets.UTF_8), v));
                }
            }
            if (p != recordEnd) {
                throw new IllegalStateException("record at delta " + offsetDelta + " is " + (p - recordEnd + length)
                        + " bytes, its length says " + length);
            }
            pos = recordEnd;
            remaining--;
            checkInside();
            return new ConsumerRecord(topic, partition, baseOffset + offsetDelta, baseTimestamp + timestampDelta, key,
                    value, headers);
        }

        private void checkInside() {
            if (pos > end) {
                throw new IllegalStateException("records run past the end of their batch");
            }
        }

        private long skipVarint(long p) {
            while ((in.readByte(p) & 0x80) != 0) {
                p++;
            }
            return p + 1;
        }

        private int readVarint(long p) {
            int value = 0;
            int shift = 0;
            int b;
            do {
                if (shift > 28) {
                    throw new IllegalStateException("varint longer than 5 bytes");
                }
                b = in.readByte(p++);
                value |= (b & 0x7f) << shift;
                shift += 7;
            } while ((b & 0x80) != 0);
            return (value >>> 1) ^ -(value & 1);
        }

        private long readVarlong(long p) {
            long value = 0;
            int shift = 0;
            long b;
            do {
                if (shift > 63) {
                    throw new IllegalStateException("varlong longer than 10 bytes");
                }
                b = in.readByte(p++);
                value |= (b & 0x7f) << shift;
                shift += 7;
            } while ((b & 0x80) != 0);
            return (value >>> 1) ^ -(value & 1);
        }
    }
}
