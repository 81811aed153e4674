package io.sluice.core.internal.bus;

import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.Sequence;
import com.lmax.disruptor.WaitStrategy;
import io.sluice.core.Acks;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.core.internal.journal.PartitionJournal;
import org.HdrHistogram.SingleWriterRecorder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The single writer of a partition journal. Appends each event as it arrives and acknowledges
 * {@link Acks#JOURNAL} sends at once (the mapped file survives a process crash); {@link Acks#SYNC} sends are
 * acknowledged at the end of the batch after one msync for the whole batch (group commit).
 *
 * <p>At the end of each batch it publishes its progress itself (the processor's sequence, through
 * {@link #setSequenceCallback}) and then wakes whoever waits on it: the subscribers parked in the ring's wait
 * strategy, and the readers of the journal (embedded consumers, long-polling fetches) parked on
 * {@link PartitionJournal#progress()}. Publishing before the processor would keeps the wake-up after the progress it announces.
 */
final class JournalHandler implements EventHandler<RingSlot> {
    private static final Logger LOG = LoggerFactory.getLogger(JournalHandler.class);

    private final PartitionJournal journal;
    private final RingBuffer<RingSlot> ring;
    private final SingleWriterRecorder publishToJournal;
    private volatile long journaled;
    private volatile long errors;
    private final WaitStrategy waitStrategy;
    private long batchStart = -1;
    private boolean syncPending;
    private Sequence progress;

    JournalHandler(PartitionJournal journal, RingBuffer<RingSlot> ring, SingleWriterRecorder publishToJournal,
                   WaitStrategy waitStrategy) {
        this.journal = journal;
        this.ring = ring;
        this.publishToJournal = publishToJournal;
        this.waitStrategy = waitStrategy;
    }

    @Override
    public void setSequenceCallback(Sequence sequenceCallback) {
        this.progress = sequenceCallback;
    }

    /** End of a batch: everything up to {@code sequence} is journaled (and synced if asked): announce it, wake waiters. */
    private void publishProgress(long sequence) {
        batchStart = -1;
        if (progress != null) {
            progress.setVolatile(sequence);
            waitStrategy.signalAllWhenBlocking();
        }
        journal.progress().signal();
    }

    @Override
    public void onEvent(RingSlot slot, long sequence, boolean endOfBatch) {
        if (batchStart < 0) {
            batchStart = sequence;
        }
        if (slot.cancelled) {
            if (endOfBatch && syncPending) {
                syncBatch(sequence);
            }
            if (endOfBatch) {
                publishProgress(sequence);
            }
            return;
        }
        try {
            slot.offset = journal.append(slot);
            slot.journalNanos = System.nanoTime();
            publishToJournal.recordValue(Math.max(0, slot.journalNanos - slot.publishNanos));
            journaled++;
            if (slot.acks == Acks.SYNC) {
                syncPending = true;
            } else {
                complete(slot, null);
            }
        } catch (RuntimeException e) {
            slot.offset = -1;
            slot.journalNanos = System.nanoTime();
            errors++;
            if (errors == 1 || errors % 1000 == 0) {
                LOG.error("{}: journal append failed ({} failures so far); the sender is told", journal.partition(), errors, e);
            }
            complete(slot, e);
        }
        if (endOfBatch) {
            if (syncPending) {
                syncBatch(sequence);
            }
            publishProgress(sequence);
        }
    }

    private void syncBatch(long endSequence) {
        RuntimeException failure = null;
        try {
            journal.sync();
        } catch (RuntimeException e) {
            failure = new SluiceException.JournalException(journal.partition() + ": sync failed: " + e, e);
            LOG.error("{}: journal sync failed; {} SYNC sends are failed", journal.partition(), endSequence - batchStart + 1, e);
        }
        for (long s = batchStart; s <= endSequence; s++) {
            RingSlot slot = ring.get(s);
            if (slot.acks == Acks.SYNC) {
                complete(slot, failure);
            }
        }
        syncPending = false;
    }

    private static void complete(RingSlot slot, Throwable error) {
        SendCallback cb = slot.takeCallback();
        if (cb != null) {
            try {
                cb.onCompletion(slot.partition, error == null ? slot.offset : -1, error);
            } catch (RuntimeException e) {
                LOG.warn("send callback threw; ignored so the journal keeps going", e);
            }
        }
    }

    @Override
    public void onShutdown() {
        journal.closeAppender();
    }

    long journaled() {
        return journaled;
    }

    long errors() {
        return errors;
    }
}
