package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.sluice.core.Header;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Writes a PRODUCE v1 record batch: Kafka's RecordBatch v2, the layout {@link RecordBatchReader} documents and the
 * broker's journal stores byte for byte (docs/journal-format.md), so the broker only checks it and rewrites its base
 * offset. Base offset 0 (the broker assigns offsets), partition leader epoch -1, attributes 0 (no compression,
 * CreateTime), producer id/epoch and base sequence -1.
 *
 * <p>Use: {@link #begin}, then {@link #append} each record in order, then {@link #finish}, which fills in the
 * header and the CRC32C. Single-threaded and reusable (the producer's event loop keeps one).
 */
public final class RecordBatchWriter {
    private final CRC32C crc = new CRC32C();
    private ByteBuf out;
    private int start;
    private int count;
    private long baseTimestamp;
    private long maxTimestamp;

    /** Starts a batch at {@code out}'s writer index; {@code baseTimestamp} is the first record's timestamp. */
    public void begin(ByteBuf out, long baseTimestamp) {
        this.out = out;
        this.start = out.writerIndex();
        this.count = 0;
        this.baseTimestamp = baseTimestamp;
        this.maxTimestamp = Long.MIN_VALUE;
        out.writeZero(RecordBatchReader.HEADER_SIZE);
    }

    public void append(long timestamp, byte[] key, byte[] value, List<Header> headers) {
        long timestampDelta = timestamp - baseTimestamp;
        int headerCount = headers.size();
        byte[][] headerKeys = headerCount == 0 ? null : new byte[headerCount][];
        int bodySize = 1 + varlongSize(timestampDelta) + varintSize(count)
                + (key == null ? varintSize(-1) : varintSize(key.length) + key.length)
                + varintSize(value.length) + value.length + varintSize(headerCount);
        for (int i = 0; i < headerCount; i++) {
            Header h = headers.get(i);
            headerKeys[i] = h.key().getBytes(StandardCharsets.UTF_8);
            bodySize += varintSize(headerKeys[i].length) + headerKeys[i].length + varintSize(h.value().length) + h.value().length;
        }
        writeVarint(out, bodySize);
        out.writeByte(0); // attributes
        writeVarlong(out, timestampDelta);
        writeVarint(out, count);
        if (key == null) {
            writeVarint(out, -1);
        } else {
            writeVarint(out, key.length);
            out.writeBytes(key);
        }
        writeVarint(out, value.length);
        out.writeBytes(value);
        writeVarint(out, headerCount);
        for (int i = 0; i < headerCount; i++) {
            byte[] v = headers.get(i).value();
            writeVarint(out, headerKeys[i].length);
            out.writeBytes(headerKeys[i]);
            writeVarint(out, v.length);
            out.writeBytes(v);
        }
        maxTimestamp = Math.max(maxTimestamp, timestamp);
        count++;
    }

    /** Fills in the header and CRC32C of the batch begun at {@link #begin}; returns its size in bytes. */
    public int finish() {
        int end = out.writerIndex();
        out.setLong(start, 0); // base offset: the broker assigns it
        out.setInt(start + RecordBatchReader.BATCH_LENGTH_OFFSET, end - start - RecordBatchReader.LOG_OVERHEAD);
        out.setInt(start + RecordBatchReader.BATCH_LENGTH_OFFSET + 4, -1); // partition leader epoch
        out.setByte(start + RecordBatchReader.MAGIC_OFFSET, RecordBatchReader.MAGIC);
        out.setShort(start + RecordBatchReader.ATTRIBUTES_OFFSET, 0);
        out.setInt(start + RecordBatchReader.LAST_OFFSET_DELTA_OFFSET, count - 1);
        out.setLong(start + RecordBatchReader.BASE_TIMESTAMP_OFFSET, baseTimestamp);
        out.setLong(start + RecordBatchReader.MAX_TIMESTAMP_OFFSET, maxTimestamp);
        out.setLong(start + RecordBatchReader.PRODUCER_ID_OFFSET, -1);
        out.setShort(start + RecordBatchReader.PRODUCER_ID_OFFSET + 8, -1); // producer epoch
        out.setInt(start + RecordBatchReader.PRODUCER_ID_OFFSET + 10, -1); // base sequence
        out.setInt(start + RecordBatchReader.RECORDS_COUNT_OFFSET, count);
        crc.reset();
        crc.update(out.nioBuffer(start + RecordBatchReader.ATTRIBUTES_OFFSET, end - start - RecordBatchReader.ATTRIBUTES_OFFSET));
        out.setInt(start + RecordBatchReader.CRC_OFFSET, (int) crc.getValue());
        out = null;
        return end - start;
    }

    static int varintSize(int value) {
        int v = (value << 1) ^ (value >> 31);
        int bytes = 1;
        while ((v & 0xffffff80) != 0) {
            bytes++;
            v >>>= 7;
        }
        return bytes;
    }

    static int varlongSize(long value) {
        long v = (value << 1) ^ (value >> 63);
        int bytes = 1;
        while ((v & 0xffffffffffffff80L) != 0L) {
            bytes++;
            v >>>= 7;
        }
        return bytes;
    }

    static void writeVarint(ByteBuf out, int value) {
        int v = (value << 1) ^ (value >> 31);
        while ((v & 0xffffff80) != 0) {
            out.writeByte((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        out.writeByte(v);
    }

    static void writeVarlong(ByteBuf out, long value) {
        long v = (value << 1) ^ (value >> 63);
        while ((v & 0xffffffffffffff80L) != 0L) {
            out.writeByte((int) ((v & 0x7f) | 0x80));
            v >>>= 7;
        }
        out.writeByte((int) v);
    }
}
