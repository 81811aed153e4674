package io.sluice.core.internal.bus;

import io.sluice.core.EventView;
import io.sluice.records.RecordBatchReader;

import java.nio.ByteBuffer;

/**
 * Presents the events of a batch slot (RecordBatch v2 bytes, docs/journal-format.md) one at a time to a subscriber,
 * as a reusable view: key and value are copied into buffers owned by the view, so stepping allocates nothing once
 * the buffers have grown. The batch was checked (framing, CRC32C, every record) before it entered the ring. One per
 * subscriber thread.
 */
final class BatchEventView implements EventView {
    private final RecordBatchReader reader = new RecordBatchReader();
    /** the slot's batch (a view the ring's batch memory keeps per buffer: nothing is allocated per batch) */
    private ByteBuffer batch;

    private String topic;
    private int partition;
    private long publishNanos;
    /** the base offset the journal gave the batch, -1 on a memory-only topic */
    private long baseOffset;

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
        reader.open(batch, 0, slot.batchLength, false); // checked whole before it entered the ring
    }

    boolean hasNext() {
        return reader.hasNext();
    }

    /** Decodes the next event into this view. */
    void next() {
        reader.advance();
        offset = baseOffset < 0 ? -1 : baseOffset + (reader.offset() - reader.baseOffset());
        timestamp = reader.timestamp();
        keyLength = reader.keyLength();
        if (keyLength >= 0) {
            if (key.length < keyLength) {
                key = new byte[keyLength];
            }
            batch.get(reader.keyOffset(), key, 0, keyLength);
        }
        valueLength = reader.valueLength();
        if (value.length < valueLength) {
            value = new byte[valueLength];
        }
        batch.get(reader.valueOffset(), value, 0, valueLength); // headers are not part of EventView
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
