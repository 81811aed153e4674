package io.sluice.core.internal.bus;

import io.sluice.core.EventView;

/**
 * Presents the events of a batch slot (RecordBatch v2 bytes, docs/journal-format.md) one at a time to a subscriber,
 * as a reusable view: key and value are copied into buffers owned by the view, so stepping allocates nothing once
 * the buffers have grown. The batch was checked (framing, CRC32C, every record) before it entered the ring. One per
 * subscriber thread.
 */
final class BatchEventView implements EventView {
    private static final int HEADER_SIZE = 61;
    private static final int BASE_TIMESTAMP_OFFSET = 27;

    private String topic;
    private int partition;
    private long publishNanos;
    private byte[] batch;
    private int pos;
    private int remaining;
    private long baseOffset;
    private long baseTimestamp;

    private long offset;
    private long timestamp;
    private byte[] key = new byte[64];
    private int keyLength;
    private byte[] value = new byte[256];
    private int valueLength;

    /** Positions on the first event of {@code slot}'s batch; offsets are -1 when the slot has none (memory-only topic). */
    void open(RingSlot slot) {
        topic = slot.topic;
        partition = slot.partition;
        publishNanos = slot.publishNanos;
        batch = slot.batchBytes();
        baseOffset = slot.offset;
        baseTimestamp = readLong(batch, BASE_TIMESTAMP_OFFSET);
        remaining = slot.batchCount;
        pos = HEADER_SIZE;
    }

    boolean hasNext() {
        return remaining > 0;
    }

    /** Decodes the next event into this view. */
    void next() {
        remaining--;
        int length = readVarint();
        int recordEnd = pos + length;
        pos++; // attributes
        long timestampDelta = readVarlong();
        int offsetDelta = readVarint();
        offset = baseOffset < 0 ? -1 : baseOffset + offsetDelta;
        timestamp = baseTimestamp + timestampDelta;
        keyLength = readVarint();
        if (keyLength >= 0) {
            if (key.length < keyLength) {
                key = new byte[keyLength];
            }
            System.arraycopy(batch, pos, key, 0, keyLength);
            pos += keyLength;
        }
        valueLength = readVarint();
        if (value.length < valueLength) {
            value = new byte[valueLength];
        }
        System.arraycopy(batch, pos, value, 0, valueLength);
        pos = recordEnd; // headers are not part of EventView
    }

    /** A zigzag varint: the same bytes as a varlong whose value fits an int. */
    private int readVarint() {
        return (int) readVarlong();
    }

    private long readVarlong() {
        long v = 0;
        int shift = 0;
        long b;
        do {
            b = batch[pos++];
            v |= (b & 0x7f) << shift;
            shift += 7;
        } while ((b & 0x80) != 0);
        return (v >>> 1) ^ -(v & 1);
    }

    private static long readLong(byte[] b, int at) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[at + i] & 0xff);
        }
        return v;
    }

    @Override
    public String topic() {
        return topic;
    }

    @Override
    public int partition() {
        return partition;
    }

    @Override
    public long offset() {
        return offset;
    }

    @Override
    public long timestamp() {
        return timestamp;
    }

    @Override
    public byte[] keyBuffer() {
        return keyLength < 0 ? null : key;
    }

    @Override
    public int keyLength() {
        return keyLength;
    }

    @Override
    public byte[] valueBuffer() {
        return value;
    }

    @Override
    public int valueLength() {
        return valueLength;
    }

    @Override
    public long publishNanos() {
        return publishNanos;
    }
}
