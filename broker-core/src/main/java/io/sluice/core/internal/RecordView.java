package io.sluice.core.internal;

import io.sluice.core.EventView;
import io.sluice.core.Header;
import io.sluice.records.RecordBatchReader;

import java.util.List;

/**
 * One record of a RecordBatch v2 (docs/journal-format.md) presented as a reusable {@link EventView}: {@link #load}
 * copies the key and value of the record a {@link RecordBatchReader} has just decoded into buffers the view owns, so
 * moving from record to record allocates nothing once the buffers have grown to the largest record (Chronicle's
 * flyweight habit: one copy out of the batch, into memory that stays in cache). Headers are decoded only when asked
 * for, from the reader, which must still be on the record. Single-threaded; valid until the next {@link #load}.
 * Used by subscribers of producer batches on the ring and by {@link io.sluice.core.PartitionReader#readViews}.
 */
public final class RecordView implements EventView {
    private String topic;
    private int partition;
    private long offset;
    private long timestamp;
    private long publishNanos;
    private byte[] key = new byte[64];
    private int keyLength;
    private byte[] value = new byte[256];
    private int valueLength;
    private RecordBatchReader reader;

    /**
     * Copies the record {@code reader} decoded last ({@link RecordBatchReader#advance}).
     *
     * @param offset the record's partition offset (-1 on a memory-only topic)
     */
    public void load(String topic, int partition, long offset, long publishNanos, RecordBatchReader reader) {
        this.topic = topic;
        this.partition = partition;
        this.offset = offset;
        this.publishNanos = publishNanos;
        this.reader = reader;
        timestamp = reader.timestamp();
        keyLength = reader.keyLength();
        if (keyLength >= 0) {
            if (key.length < keyLength) {
                key = new byte[keyLength];
            }
            reader.buffer().get(reader.keyOffset(), key, 0, keyLength);
        }
        valueLength = reader.valueLength();
        if (value.length < valueLength) {
            value = new byte[valueLength];
        }
        reader.buffer().get(reader.valueOffset(), value, 0, valueLength);
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
    public List<Header> headers() {
        return reader.headers();
    }

    @Override
    public long publishNanos() {
        return publishNanos;
    }
}
