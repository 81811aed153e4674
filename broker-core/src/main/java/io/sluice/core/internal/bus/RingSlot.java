package io.sluice.core.internal.bus;

import io.sluice.core.Acks;
import io.sluice.core.EventView;
import io.sluice.core.Header;
import io.sluice.core.SendCallback;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * One preallocated slot of a partition ring. A producer thread fills it between claim and publish; after publish
 * it is owned, in turn, by the journal writer and then the subscribers (Disruptor's sequence barriers order the
 * hand-offs, so the fields need no volatile). Key and value are copied into slot-owned buffers that are reused,
 * so steady-state publishing allocates nothing.
 */
public final class RingSlot implements EventView {
    /** Buffers above this size are not kept for reuse by a smaller event, bounding idle ring memory. */
    static final int RETAINED_BUFFER_LIMIT = 64 * 1024;
    private static final byte[] EMPTY = new byte[0];
    private static final List<Header> NO_HEADERS = List.of();

    String topic;
    int partition;
    byte[] key = EMPTY;
    int keyLength = -1;
    byte[] value = EMPTY;
    int valueLength;
    List<Header> headers = NO_HEADERS;
    long timestamp;
    /** System.nanoTime() at publish for the events sampled for latency ({@link PartitionRing#LATENCY_SAMPLE_MASK}), else 0 */
    long publishNanos;
    long journalNanos;
    Acks acks;
    /**
     * The last callback filled in, kept after it ran ({@link #callbackDue} says whether it is still to run): nulling it
     * on completion made the next {@link #fill} of the same callback store the reference again, a garbage-collector
     * card per journaled event. Like the Disruptor's own slots, a one-event slot holds what it was filled with until
     * it is filled again (an embedding application's callback for at most one lap of the ring). A batch slot's
     * callback, a network request's own, is let go once it ran: it is a different one each time anyway.
     */
    SendCallback callback;
    boolean callbackDue;
    long offset = -1;
    /** claimed after the ring closed: handlers skip it. */
    boolean cancelled;
    /**
     * A batch slot carries {@code batchCount} events as one record batch (RecordBatch v2, docs/journal-format.md) of
     * {@code batchLength} bytes in {@code batchBuffers.buffer(batchIndex)}; its {@link #offset} is the batch's base
     * offset. 0 for a slot holding one event.
     */
    int batchCount;
    int batchLength;
    int batchIndex;
    BatchBuffers batchBuffers;

    /**
     * Fills the slot with one event. Reference fields are written only when they change (the topic, the reused key
     * and value buffers, usually the headers, the acks and the callback are the same from one event to the next): a
     * reference store into this long-lived slot dirties a garbage-collector card even when it stores the same
     * reference, and G1's refinement threads then rescan it, a cost per event on a 2-core machine
     * (docs/benchmarks.md, issue 22).
     */
    void fill(String topic, int partition, byte[] key, byte[] value, List<Header> headers, long timestamp,
              Acks acks, SendCallback callback) {
        if (this.topic != topic) {
            this.topic = topic;
        }
        this.partition = partition;
        if (key == null) {
            this.keyLength = -1;
        } else {
            byte[] keyBuffer = reuse(this.key, key.length);
            if (keyBuffer != this.key) {
                this.key = keyBuffer;
            }
            System.arraycopy(key, 0, keyBuffer, 0, key.length);
            this.keyLength = key.length;
        }
        byte[] valueBuffer = reuse(this.value, value.length);
        if (valueBuffer != this.value) {
            this.value = valueBuffer;
        }
        System.arraycopy(value, 0, valueBuffer, 0, value.length);
        this.valueLength = value.length;
        if (this.headers != headers) {
            this.headers = headers;
        }
        this.timestamp = timestamp;
        if (this.acks != acks) {
            this.acks = acks;
        }
        if (this.callback != callback) {
            this.callback = callback;
        }
        this.callbackDue = callback != null;
        this.offset = -1;
        this.cancelled = false;
        this.batchCount = 0;
        this.publishNanos = 0; // PartitionRing stamps the events it samples for latency
    }

    /** A record batch of {@code count} events, already copied into {@code buffers.buffer(index)}. */
    void fillBatch(String topic, int partition, BatchBuffers buffers, int index, int length, int count, Acks acks,
                   SendCallback callback) {
        this.topic = topic;
        this.partition = partition;
        this.batchBuffers = buffers;
        this.batchIndex = index;
        this.batchLength = length;
        this.batchCount = count;
        this.keyLength = -1;
        this.valueLength = 0;
        this.headers = NO_HEADERS;
        this.acks = acks;
        this.callback = callback; // a request's own, a different one each time: this slot's card is dirtied anyway
        this.callbackDue = callback != null;
        this.offset = -1;
        this.cancelled = false;
        this.publishNanos = 0;
    }

    boolean isBatch() {
        return batchCount > 0;
    }

    /** The batch's bytes, from index 0 to {@link #batchLength}, as a heap ByteBuffer (absolute access only); batch slots only. */
    ByteBuffer batchBytes() {
        return batchBuffers.view(batchIndex);
    }

    void cancel() {
        this.cancelled = true;
        this.callback = null;
        this.callbackDue = false;
        this.valueLength = 0;
        this.keyLength = -1;
        this.batchCount = 0;
    }

    private static byte[] reuse(byte[] current, int needed) {
        if (current.length >= needed && (current.length <= RETAINED_BUFFER_LIMIT || needed > RETAINED_BUFFER_LIMIT / 2)) {
            return current;
        }
        return new byte[Math.max(needed, 64)];
    }

    @Override
    public List<Header> headers() {
        return headers;
    }

    public Acks acks() {
        return acks;
    }

    /** The callback still to run, once: null after the first call (and for a slot filled without one). */
    SendCallback takeCallback() {
        if (!callbackDue) {
            return null;
        }
        callbackDue = false;
        SendCallback cb = callback;
        if (batchCount > 0) {
            callback = null;
        }
        return cb;
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
