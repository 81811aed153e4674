package io.sluice.records;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * A flyweight over one record batch in a {@link ByteBuffer}: Kafka's RecordBatch v2 (magic 2, big-endian, CRC32C),
 * the unit Sluice's journal stores (one batch per Chronicle document), PRODUCE carries and FETCH ships back
 * unchanged. Full diagram with the record layout: docs/journal-format.md.
 *
 * <pre>
 *  0          8            12                     16     17     21          23                27
 *  +----------+------------+----------------------+------+------+-----------+-----------------+
 *  | base     | batch      | partition            | magic| crc  | attributes| last offset     |
 *  | offset   | length     | leader epoch         |  =2  | u32  |  i16      | delta  i32      |
 *  | i64      | i32        | i32                  |  i8  |      |           |                 |
 *  +----------+------------+----------------------+------+------+-----------+-----------------+
 *  27              35              43             51       53          57        61
 *  +---------------+---------------+--------------+--------+-----------+---------+---------...
 *  | base timestamp| max timestamp | producer id  |producer| base      | records | records
 *  | i64           | i64           | i64          |epoch   | sequence  | count   | ({@link RecordBatchReader})
 *  |               |               |              |i16     | i32       | i32     |
 *  +---------------+---------------+--------------+--------+-----------+---------+---------...
 * </pre>
 *
 * {@code batch length} counts the bytes after itself (from the partition leader epoch to the end); the CRC32C covers
 * attributes to the end, so the base offset can be rewritten without recomputing it.
 *
 * <p>{@link #wrap} takes a region {@code [offset, offset + available)} of a big-endian buffer; every accessor reads
 * (or writes) in place, at an absolute index, and fails with {@link IndexOutOfBoundsException} for a field outside the
 * region, so a flyweight over a short or hostile buffer never reads its neighbours. Nothing is copied or allocated.
 * The header accessors are what a Kafka-protocol front needs too (producer id and epoch, base sequence, attributes,
 * last offset delta, count). Single-threaded; rewrap to reuse.
 */
public final class RecordBatch {
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

    /** Attribute bits (Kafka's): compression codec in bits 0-2, timestamp type in bit 3, then transactional, control. */
    public static final int COMPRESSION_CODEC_MASK = 0x07;
    public static final int TIMESTAMP_TYPE_MASK = 0x08;
    public static final int TRANSACTIONAL_FLAG_MASK = 0x10;
    public static final int CONTROL_FLAG_MASK = 0x20;

    /** Producer id, epoch and base sequence of a batch without idempotence. */
    public static final long NO_PRODUCER_ID = -1L;
    public static final short NO_PRODUCER_EPOCH = -1;
    public static final int NO_SEQUENCE = -1;

    private final CRC32C crc = new CRC32C();
    private ByteBuffer buffer;
    private int offset;
    private int available;

    /**
     * Points this flyweight at the batch starting at {@code offset} of {@code buffer}, of which {@code available}
     * bytes may be read (a batch's own length is {@link #sizeInBytes()}; the region may hold more).
     *
     * @throws IllegalArgumentException  for a little-endian buffer
     * @throws IndexOutOfBoundsException for a region outside the buffer's limit
     */
    public RecordBatch wrap(ByteBuffer buffer, int offset, int available) {
        if (buffer.order() != ByteOrder.BIG_ENDIAN) {
            throw new IllegalArgumentException("record batches are big-endian; the buffer is " + buffer.order());
        }
        if (offset < 0 || available < 0 || offset > buffer.limit() - available) {
            throw new IndexOutOfBoundsException("region [" + offset + ", +" + available + ") outside a buffer of limit "
                    + buffer.limit());
        }
        this.buffer = buffer;
        this.offset = offset;
        this.available = available;
        return this;
    }

    public ByteBuffer buffer() {
        return buffer;
    }

    /** Index of the batch's first byte in {@link #buffer()}. */
    public int offset() {
        return offset;
    }

    /** Bytes of the region wrapped. */
    public int available() {
        return available;
    }

    // ---- header fields, read in place ----

    public long baseOffset() {
        return buffer.getLong(at(BASE_OFFSET_OFFSET, 8));
    }

    public int batchLength() {
        return buffer.getInt(at(BATCH_LENGTH_OFFSET, 4));
    }

    /** The batch's size in bytes, base offset and length included. */
    public int sizeInBytes() {
        return LOG_OVERHEAD + batchLength();
    }

    public int partitionLeaderEpoch() {
        return buffer.getInt(at(PARTITION_LEADER_EPOCH_OFFSET, 4));
    }

    public byte magic() {
        return buffer.get(at(MAGIC_OFFSET, 1));
    }

    /** The CRC32C stored in the header, unsigned. */
    public long storedCrc() {
        return buffer.getInt(at(CRC_OFFSET, 4)) & 0xFFFF_FFFFL;
    }

    public short attributes() {
        return buffer.getShort(at(ATTRIBUTES_OFFSET, 2));
    }

    public int lastOffsetDelta() {
        return buffer.getInt(at(LAST_OFFSET_DELTA_OFFSET, 4));
    }

    public long baseTimestamp() {
        return buffer.getLong(at(BASE_TIMESTAMP_OFFSET, 8));
    }

    public long maxTimestamp() {
        return buffer.getLong(at(MAX_TIMESTAMP_OFFSET, 8));
    }

    public long producerId() {
        return buffer.getLong(at(PRODUCER_ID_OFFSET, 8));
    }

    public short producerEpoch() {
        return buffer.getShort(at(PRODUCER_EPOCH_OFFSET, 2));
    }

    public int baseSequence() {
        return buffer.getInt(at(BASE_SEQUENCE_OFFSET, 4));
    }

    /** The number of records, as the header states it. */
    public int count() {
        return buffer.getInt(at(RECORDS_COUNT_OFFSET, 4));
    }

    /** One past the last offset: base offset + count. */
    public long nextOffset() {
        return baseOffset() + count();
    }

    /** Rewrites the base offset in place (outside the CRC), as a broker assigning offsets does. */
    public void baseOffset(long baseOffset) {
        buffer.putLong(at(BASE_OFFSET_OFFSET, 8), baseOffset);
    }

    // ---- checks ----

    /**
     * Checks the framing against the region: a whole header, magic 2, a batch length that fits, a record count that
     * agrees with the last offset delta. Reads 61 bytes; does not walk the records or compute the CRC.
     *
     * @return null if sound, else what is wrong
     */
    public String framingProblem() {
        return framingProblem(available);
    }

    /**
     * {@link #framingProblem()} for a batch stored in {@code storedBytes}, of which the region may hold only a copy of
     * the header (as when the batch lies in memory that is not a ByteBuffer, such as a Chronicle document).
     */
    public String framingProblem(long storedBytes) {
        if (available < HEADER_SIZE || storedBytes < HEADER_SIZE) {
            return "batch of " + Math.min(available, storedBytes) + " bytes is shorter than its " + HEADER_SIZE + "-byte header";
        }
        byte magic = magic();
        if (magic != MAGIC) {
            return "magic " + magic + ", expected " + MAGIC;
        }
        int length = batchLength();
        if (length < HEADER_SIZE - LOG_OVERHEAD || length > storedBytes - LOG_OVERHEAD) {
            return "batch length " + length + " does not fit the " + storedBytes + " bytes stored";
        }
        int count = count();
        int lastDelta = lastOffsetDelta();
        if (count < 0 || (count > 0 && lastDelta != count - 1)) {
            return "record count " + count + " disagrees with last offset delta " + lastDelta;
        }
        return null;
    }

    /** CRC32C of attributes to the end of the batch (framing must be sound). */
    public long computeCrc() {
        return crc32c(ATTRIBUTES_OFFSET, sizeInBytes());
    }

    /** Computes the CRC32C and stores it in the header (framing must be sound). */
    public void updateCrc() {
        buffer.putInt(at(CRC_OFFSET, 4), (int) computeCrc());
    }

    /**
     * Framing, then the CRC32C.
     *
     * @return null if sound, else what is wrong
     */
    public String problem() {
        String framing = framingProblem();
        if (framing != null) {
            return framing;
        }
        long stored = storedCrc();
        long actual = computeCrc();
        if (stored != actual) {
            return "CRC32C mismatch: stored " + Long.toHexString(stored) + ", computed " + Long.toHexString(actual);
        }
        return null;
    }

    /**
     * The CRC32C of {@code [from, to)} relative to the batch. A heap buffer is read through its array; a direct one
     * through its position and limit, which are restored.
     */
    private long crc32c(int from, int to) {
        int start = at(from, to - from);
        crc.reset();
        if (buffer.hasArray()) {
            crc.update(buffer.array(), buffer.arrayOffset() + start, to - from);
        } else {
            int position = buffer.position();
            int limit = buffer.limit();
            buffer.position(start).limit(start + to - from);
            try {
                crc.update(buffer);
            } finally {
                buffer.limit(limit).position(position);
            }
        }
        return crc.getValue();
    }

    /** The absolute index of {@code size} bytes at {@code field} of the batch, checked against the region. */
    private int at(int field, int size) {
        if (field > available - size) {
            throw new IndexOutOfBoundsException("bytes [" + field + ", " + (field + size) + ") of a batch in a "
                    + available + "-byte region");
        }
        return offset + field;
    }
}
