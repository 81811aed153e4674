package io.sluice.core.internal.bus;

import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.Sequence;
import io.sluice.core.Acks;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.core.internal.journal.PartitionJournal;
import io.sluice.records.RecordBatchWriter;
import org.HdrHistogram.SingleWriterRecorder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The single writer of a partition journal. A batch slot (a producer's record batch, {@link RingSlot#isBatch()})
 * becomes a journal document of its own, its bytes unchanged but the base offset. Single events it coalesces: what the ring hands over in one Disruptor batch into one
 * journal record batch (one Chronicle document), closing it early only when the next event would take it past
 * {@code maxBatchBytes} ({@link PartitionJournal#DEFAULT_MAX_BATCH_BYTES}). {@link Acks#JOURNAL} sends are
 * acknowledged when their record batch is committed (it is then in the mapped file, which survives a process crash);
 * {@link Acks#SYNC} sends at the end of the ring batch after one msync for the whole of it (group commit). An event
 * the journal cannot encode fails alone; a failed write fails every event of its record batch.
 *
 * <p>At the end of each batch it publishes its progress itself (its poller's sequence, given through
 * {@link #setSequenceCallback}) and then wakes whoever waits on it: the threads of this partition's subscribers
 * ({@link Wakers}), and the readers of the journal (embedded consumers, long-polling fetches) parked on
 * {@link PartitionJournal#progress()}. Publishing before the poller would keeps the wake-up after the progress it announces.
 */
final class JournalHandler implements EventHandler<RingSlot> {
    private static final Logger LOG = LoggerFactory.getLogger(JournalHandler.class);

    private final PartitionJournal journal;
    private final RingBuffer<RingSlot> ring;
    private final SingleWriterRecorder publishToJournal;
    /** Single-writer counter (the journal thread), a Disruptor {@link Sequence}: release store, acquire load, no fence per event. */
    private final Sequence journaled = new Sequence(0);
    private volatile long errors;
    private final Wakers subscribers;
    private final int maxBatchBytes;
    private long batchStart = -1;
    /** ring sequence of the first event in the open journal batch, -1 if none */
    private long documentStart = -1;
    private boolean syncPending;
    private Sequence progress;

    JournalHandler(PartitionJournal journal, RingBuffer<RingSlot> ring, SingleWriterRecorder publishToJournal,
                   Wakers subscribers) {
        this(journal, ring, publishToJournal, subscribers, PartitionJournal.DEFAULT_MAX_BATCH_BYTES);
    }

    JournalHandler(PartitionJournal journal, RingBuffer<RingSlot> ring, SingleWriterRecorder publishToJournal,
                   Wakers subscribers, int maxBatchBytes) {
        this.maxBatchBytes = maxBatchBytes;
        this.journal = journal;
        this.ring = ring;
        this.publishToJournal = publishToJournal;
        this.subscribers = subscribers;
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
            subscribers.wakeAll();
        }
        journal.progress().signal();
    }

    @Override
    public void onEvent(RingSlot slot, long sequence, boolean endOfBatch) {
        if (batchStart < 0) {
            batchStart = sequence;
        }
        if (slot.cancelled) {
            // nothing to store
        } else if (slot.isBatch()) {
            appendBatch(slot, sequence);
        } else {
            add(slot, sequence);
        }
        if (endOfBatch) {
            commit(sequence);
            if (syncPending) {
                syncBatch(sequence);
            }
            publishProgress(sequence);
        }
    }

    /** Adds the event to the open journal batch, first committing that batch if the event would take it past the bound. */
    private void add(RingSlot slot, long sequence) {
        if (journal.batchOpen() && journal.batchCount() > 0 && journal.batchBytes()
                + RecordBatchWriter.maxRecordSize(slot.keyLength, slot.valueLength, slot.headers) > maxBatchBytes) {
            commit(sequence - 1);
        }
        try {
            if (!journal.batchOpen()) {
                journal.beginBatch();
                documentStart = sequence;
            }
            slot.offset = journal.add(slot);
        } catch (RuntimeException e) {
            slot.offset = -1;
            fail(slot, e);
            if (!journal.batchOpen() && documentStart >= 0) {
                failDocument(sequence - 1, e); // the write itself failed: the events added before are lost too
            }
        }
    }

    /**
     * A producer's record batch becomes a document of its own, its bytes unchanged but the base offset: first the
     * events coalesced so far are committed, so the journal keeps their ring order.
     */
    private void appendBatch(RingSlot slot, long sequence) {
        commit(sequence - 1);
        try {
            slot.offset = journal.appendBatch(slot.batchBytes(), slot.batchLength, slot.batchCount);
        } catch (RuntimeException e) {
            slot.offset = -1;
            fail(slot, e);
            return;
        }
        long now = System.nanoTime();
        slot.journalNanos = now;
        record(slot, now);
        journaled.set(journaled.get() + slot.batchCount);
        if (slot.acks == Acks.SYNC) {
            syncPending = true;
        } else {
            complete(slot, null);
        }
    }

    /**
     * Commits the open batch (events {@code documentStart..lastSequence}): from here they are in the mapped file.
     * {@link Acks#JOURNAL} sends are acknowledged now, {@link Acks#SYNC} sends after the sync at the end of the batch.
     */
    private void commit(long lastSequence) {
        if (documentStart < 0) {
            journal.abortBatch(); // every event of it failed (or none was added)
            return;
        }
        try {
            journal.commitBatch();
        } catch (RuntimeException e) {
            failDocument(lastSequence, e);
            return;
        }
        long now = System.nanoTime();
        for (long s = documentStart; s <= lastSequence; s++) {
            RingSlot slot = ring.get(s);
            if (slot.cancelled || slot.offset < 0) {
                continue;
            }
            slot.journalNanos = now;
            record(slot, now);
            journaled.set(journaled.get() + 1);
            if (slot.acks == Acks.SYNC) {
                syncPending = true;
            } else {
                complete(slot, null);
            }
        }
        documentStart = -1;
    }

    /** publish→journal latency, for the slots sampled for it ({@link PartitionRing#LATENCY_SAMPLE_MASK}). */
    private void record(RingSlot slot, long now) {
        if (slot.publishNanos != 0) {
            publishToJournal.recordValue(Math.max(0, now - slot.publishNanos));
        }
    }

    /** The document holding {@code documentStart..lastSequence} was lost: fail each event that was added to it. */
    private void failDocument(long lastSequence, RuntimeException e) {
        for (long s = documentStart; s <= lastSequence; s++) {
            RingSlot slot = ring.get(s);
            if (slot.cancelled || slot.offset < 0) {
                continue;
            }
            slot.offset = -1;
            fail(slot, e);
        }
        documentStart = -1;
    }

    private void fail(RingSlot slot, RuntimeException e) {
        slot.journalNanos = System.nanoTime();
        long before = errors;
        errors += slot.isBatch() ? slot.batchCount : 1;
        if (before == 0 || before / 1000 != errors / 1000) {
            LOG.error("{}: journal append failed ({} failures so far); the sender is told", journal.partition(), errors, e);
        }
        complete(slot, e);
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
        return journaled.get();
    }

    long errors() {
        return errors;
    }
}
