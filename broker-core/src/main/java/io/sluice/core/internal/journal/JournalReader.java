package io.sluice.core.internal.journal;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.PartitionReader;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import net.openhft.chronicle.queue.ExcerptTailer;

import java.util.function.Consumer;

/**
 * A cursor over a partition journal by dense offset. Single-threaded, but may move between threads between
 * calls (the Chronicle tailer's owner check is reset at each call), as a Kafka consumer may.
 */
public final class JournalReader implements PartitionReader {
    private final PartitionJournal journal;
    private ExcerptTailer tailer;
    private long position;
    /** true when the tailer is known to sit exactly at {@link #position}. */
    private boolean positioned;
    private boolean closed;

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
    }

    /** Offset of the first event at or after the timestamp (the end offset if none). */
    public long offsetForTimestamp(long epochMillis) {
        return journal.offsetForTimestamp(epochMillis);
    }

    @Override
    public int read(int maxRecords, int maxBytes, Consumer<ConsumerRecord> sink) {
        if (closed) {
            throw new SluiceException.ClosedException(journal.partition() + ": reader is closed");
        }
        long end = journal.endOffset();
        if (position >= end) {
            return 0;
        }
        if (position < journal.startOffset()) {
            throw new SluiceException.OffsetOutOfRangeException(journal.partition() + ": offset " + position
                    + " was removed by retention; the first retained offset is " + journal.startOffset());
        }
        ExcerptTailer t = tailer();
        if (!positioned) {
            long index = journal.indexOf(position);
            if (index < 0 || !t.moveToIndex(index)) {
                throw new SluiceException.JournalException(journal.partition() + ": cannot position at offset " + position, null);
            }
            positioned = true;
        }
        int count = 0;
        int bytes = 0;
        while (count < maxRecords && position < end && (count == 0 || bytes < maxBytes)) {
            ConsumerRecord record = PartitionJournal.readNext(t, journal.partition());
            if (record == null) {
                break;
            }
            if (record.offset() != position) {
                // the file under us changed (retention) or a cycle gap: re-position by offset next time
                positioned = false;
                if (record.offset() < position) {
                    continue;
                }
                throw new SluiceException.JournalException(journal.partition() + ": expected offset " + position
                        + " but the journal holds " + record.offset(), null);
            }
            sink.accept(record);
            position++;
            count++;
            bytes += record.value().length + (record.key() == null ? 0 : record.key().length);
        }
        return count;
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
