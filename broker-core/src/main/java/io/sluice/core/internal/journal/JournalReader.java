package io.sluice.core.internal.journal;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.EventView;
import io.sluice.core.PartitionReader;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.RecordView;
import io.sluice.records.MalformedBatchException;
import io.sluice.records.RecordBatch;
import io.sluice.records.RecordBatchReader;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.core.Jvm;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.wire.DocumentContext;

import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * A cursor over a partition journal by dense offset: it finds the record batch holding its position and skips to
 * the position inside it. Single-threaded, but may move between threads between
 * calls (the Chronicle tailer's owner check is reset at each call), as a Kafka consumer may.
 */
public final class JournalReader implements PartitionReader {
    private final PartitionJournal journal;
    private ExcerptTailer tailer;
    private long position;
    /** true when the tailer sits at the batch holding {@link #position} (or at the one before it was written). */
    private boolean positioned;
    /** when not positioned: the index of the batch a read stopped inside, -1 to search for {@link #position} */
    private long resumeIndex = -1;
    /** Walks a batch in place in its document ({@link #stored}'s view): record-batch's codec reads ByteBuffers. */
    private final RecordBatchReader cursor = new RecordBatchReader();
    private final StoredBatch stored = new StoredBatch();
    /** where records start in batches read lately: a read by offset walks at most a few of a batch's records */
    private final RecordPositions positions = new RecordPositions();
    /** what {@link #readViews} hands over: its buffers grow to the largest record read (at most maxEventSize) */
    private final RecordView view = new RecordView();
    private boolean closed;
    /**
     * False once a direct buffer refused to give its address: on JDK 22+ a buffer derived from a shared memory
     * segment (Netty 4.2's allocator on JDK 25) throws on {@code address()}. Such buffers are then filled through
     * {@link #scratch}. JVM-wide: the allocator is the same for every reader.
     */
    private static volatile boolean nativeCopy = true;
    /** Bounce array for buffers without a usable address; grows to the largest batch copied (at most a batch's bound). */
    private byte[] scratch = new byte[0];

    JournalReader(PartitionJournal journal) {
        this.journal = journal;
        this.position = journal.startOffset();
    }

    @Override
    public TopicPartition partition() {
        return journal.partition();
    }

    @Override
    public long position() {
        return position;
    }

    @Override
    public void seek(long offset) {
        long start = journal.startOffset();
        long end = journal.endOffset();
        if (offset < start || offset > end) {
            throw new SluiceException.OffsetOutOfRangeException(journal.partition() + ": offset " + offset
                    + " is outside the retained range [" + start + ", " + end + "]");
        }
        position = offset;
        positioned = false;
        resumeIndex = -1;
    }

    /** Offset of the first event at or after the timestamp (the end offset if none). */
    public long offsetForTimestamp(long epochMillis) {
        return journal.offsetForTimestamp(epochMillis);
    }

    /**
     * Reads records from {@link #position()} on, at most {@code maxRecords}, stopping once {@code maxBytes} of keys and
     * values were delivered (at least one record). Starts exactly at the position, also in the middle of a batch.
     *
     * @throws SluiceException.CorruptRecordException if a batch fails its framing check, or its CRC32C, checked once for
     *         a batch recovered from disk ({@link CheckedBatches}: this journal's own batches were checked when stored)
     */
    @Override
    public int read(int maxRecords, int maxBytes, Consumer<ConsumerRecord> sink) {
        TopicPartition tp = journal.partition();
        return read(maxRecords, maxBytes, () -> sink.accept(cursor.current(tp.topic(), tp.partition())));
    }

    /** As {@link #read}, each record handed over as {@link #view}, a copy into buffers this reader reuses. */
    @Override
    public int readViews(int maxRecords, int maxBytes, Consumer<? super EventView> sink) {
        TopicPartition tp = journal.partition();
        return read(maxRecords, maxBytes, () -> {
            view.load(tp.topic(), tp.partition(), position, 0, cursor);
            sink.accept(view);
        });
    }

    /** The record {@link #cursor} decoded last, at {@link #position}, to the caller's sink. */
    @FunctionalInterface
    private interface Delivery {
        void deliver();
    }

    private int read(int maxRecords, int maxBytes, Delivery delivery) {
        long end = readableEnd();
        if (position >= end) {
            return 0;
        }
        ExcerptTailer t = positionedTailer();
        TopicPartition tp = journal.partition();
        int count = 0;
        int bytes = 0;
        while (count < maxRecords && position < end && (count == 0 || bytes < maxBytes)) {
            try (DocumentContext dc = t.readingDocument()) {
                if (!dc.isPresent()) {
                    break;
                }
                if (dc.isMetaData()) {
                    continue;
                }
                // the batch in place in the mapped file: nothing of it is copied but the records delivered
                ByteBuffer batch = stored.view(dc.wire().bytes());
                try {
                    try {
                        journal.openBatch(cursor, batch, dc.index());
                    } catch (MalformedBatchException e) {
                        positioned = false;
                        throw journal.corrupt(position, e.getMessage());
                    }
                    if (cursor.nextOffset() <= position) {
                        continue; // a batch wholly before the position: the file under us changed (retention)
                    }
                    if (cursor.baseOffset() > position) {
                        positioned = false;
                        throw new SluiceException.JournalException(tp + ": expected offset " + position
                                + " but the next journal batch starts at " + cursor.baseOffset(), null);
                    }
                    try {
                        // dense: below nextOffset, so within the batch; next() checks the offset delta of what it decodes
                        positions.skip(cursor, batch, dc.index(), (int) (position - cursor.baseOffset()));
                    } catch (MalformedBatchException e) {
                        positioned = false;
                        throw journal.corrupt(position, e.getMessage());
                    }
                    while (cursor.hasNext() && count < maxRecords && position < end && (count == 0 || bytes < maxBytes)) {
                        try {
                            cursor.advance();
                        } catch (MalformedBatchException e) {
                            positioned = false;
                            throw journal.corrupt(position, e.getMessage());
                        }
                        if (cursor.offset() != position) {
                            positioned = false;
                            throw journal.corrupt(position, "the record there has offset " + cursor.offset());
                        }
                        try {
                            delivery.deliver();
                        } catch (RuntimeException e) {
                            positioned = false; // the tailer moves past this batch on close: find the position again
                            resumeIndex = -1;
                            throw e;
                        }
                        position++;
                        count++;
                        bytes += cursor.valueLength() + Math.max(0, cursor.keyLength());
                    }
                    if (cursor.hasNext()) {
                        // stopped inside the batch: the tailer moves past it on close, so come back to it next time
                        resumeIndex = dc.index();
                        positioned = false;
                    }
                } finally {
                    stored.release(); // before the document closes: Chronicle may unmap it after
                }
            }
        }
        return count;
    }

    @Override
    public int readBatches(int maxBytes, BatchSink sink) {
        long end = readableEnd();
        if (position >= end) {
            return 0;
        }
        ExcerptTailer t = positionedTailer();
        int bytes = 0;
        while (position < end) {
            try (DocumentContext dc = t.readingDocument()) {
                if (!dc.isPresent()) {
                    break;
                }
                if (dc.isMetaData()) {
                    continue;
                }
                Bytes<?> in = dc.wire().bytes();
                long start = in.readPosition();
                RecordBatch header = stored.header(in);
                String problem = header.framingProblem(in.readRemaining());
                if (problem != null) {
                    positioned = false;
                    if (bytes > 0) {
                        resumeIndex = dc.index(); // hand over the sound batches; the next read reports this one
                        break;
                    }
                    throw journal.corrupt(position, problem);
                }
                long base = header.baseOffset();
                long next = header.nextOffset();
                if (next <= position) {
                    continue; // a batch wholly before the position: the file under us changed (retention)
                }
                if (base > position) {
                    positioned = false;
                    throw new SluiceException.JournalException(journal.partition() + ": expected offset " + position
                            + " but the next journal batch starts at " + base, null);
                }
                int length = header.sizeInBytes();
                if (bytes > 0 && (long) bytes + length > maxBytes) {
                    // does not fit: the tailer moves past it on close, so come back to it next time
                    resumeIndex = dc.index();
                    positioned = false;
                    break;
                }
                ByteBuffer dst;
                try {
                    dst = sink.claim(length);
                    copy(in, start, dst, length);
                } catch (RuntimeException e) {
                    resumeIndex = dc.index();
                    positioned = false;
                    throw e;
                }
                bytes += length;
                position = next;
            }
        }
        return bytes;
    }

    /**
     * One copy from the mapped journal into {@code dst}: native to native when the buffer is direct and gives its
     * address; into a heap buffer's array; otherwise through {@link #scratch} (two copies).
     */
    private void copy(Bytes<?> in, long from, ByteBuffer dst, int length) {
        if (dst.remaining() < length) {
            throw new IllegalArgumentException("claimed buffer has " + dst.remaining() + " bytes for a " + length + "-byte batch");
        }
        int at = dst.position();
        if (dst.hasArray()) {
            in.read(from, dst.array(), dst.arrayOffset() + at, length);
        } else if (nativeCopy && dst.isDirect() && nativeCopy(in, from, dst, at, length)) {
            // copied
        } else {
            if (scratch.length < length) {
                scratch = new byte[length];
            }
            in.read(from, scratch, 0, length);
            dst.put(at, scratch, 0, length);
        }
        dst.position(at + length);
    }

    private static boolean nativeCopy(Bytes<?> in, long from, ByteBuffer dst, int at, int length) {
        long address;
        try {
            address = Jvm.address(dst);
        } catch (RuntimeException e) {
            // JDK 22+: "ByteBuffer derived from closeable shared sessions not supported" (UnsupportedOperationException)
            nativeCopy = false;
            return false;
        }
        in.nativeRead(from, address + at, length);
        return true;
    }

    /** The end offset to read up to; fails when the reader is closed or retention removed the position. */
    private long readableEnd() {
        if (closed) {
            throw new SluiceException.ClosedException(journal.partition() + ": reader is closed");
        }
        long end = journal.endOffset();
        if (position < end && position < journal.startOffset()) {
            throw new SluiceException.OffsetOutOfRangeException(journal.partition() + ": offset " + position
                    + " was removed by retention; the first retained offset is " + journal.startOffset());
        }
        return end;
    }

    /** The tailer, on the batch that holds {@link #position} (or where a read stopped inside a batch). */
    private ExcerptTailer positionedTailer() {
        ExcerptTailer t = tailer();
        if (!positioned) {
            long index = resumeIndex >= 0 ? resumeIndex : journal.documentIndexOf(t, position, stored);
            resumeIndex = -1;
            if (index < 0 || !t.moveToIndex(index)) {
                throw new SluiceException.JournalException(journal.partition() + ": cannot position at offset " + position, null);
            }
            positioned = true;
        }
        return t;
    }

    private ExcerptTailer tailer() {
        if (tailer == null) {
            tailer = journal.createTailer();
        } else {
            tailer.singleThreadedCheckReset();
        }
        return tailer;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            if (tailer != null) {
                tailer.singleThreadedCheckReset();
                tailer.close();
            }
        }
    }
}
