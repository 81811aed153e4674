package io.sluice.core.internal.bus;

import io.sluice.core.EventView;
import io.sluice.core.internal.RecordView;
import io.sluice.records.RecordBatchReader;

/**
 * Steps through the events of a batch slot (RecordBatch v2 bytes, docs/journal-format.md), presenting each to a
 * subscriber as one reusable {@link RecordView}: stepping allocates nothing once the view's buffers have grown. The
 * batch was checked (framing, CRC32C, every record) before it entered the ring. One per subscriber thread.
 */
final class BatchEventView {
    private final RecordBatchReader reader = new RecordBatchReader();
    private final RecordView view = new RecordView();
    private String topic;
    private int partition;
    private long publishNanos;
    /** the base offset the journal gave the batch, -1 on a memory-only topic */
    private long baseOffset;

    /** Positions on the first event of {@code slot}'s batch; offsets are -1 when the slot has none (memory-only topic). */
    void open(RingSlot slot) {
        topic = slot.topic;
        partition = slot.partition;
        publishNanos = slot.publishNanos;
        baseOffset = slot.offset;
        reader.open(slot.batchBytes(), 0, slot.batchLength, false); // checked whole before it entered the ring
    }

    boolean hasNext() {
        return reader.hasNext();
    }

    /** Decodes the next event and returns the view of it, valid until the next call. */
    EventView next() {
        reader.advance();
        long offset = baseOffset < 0 ? -1 : baseOffset + (reader.offset() - reader.baseOffset());
        view.load(topic, partition, offset, publishNanos, reader);
        return view;
    }
}
