package io.sluice.core.internal.bus;

import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.Sequence;
import io.sluice.core.EventSubscriber;
import io.sluice.core.EventView;
import org.HdrHistogram.SingleWriterRecorder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a user {@link EventSubscriber} on one of the broker's subscriber threads; its failures are counted and logged,
 * never fatal. Once {@link #stop() stopped} (its subscription closed, perhaps from its own callback in the middle of
 * a batch) it delivers nothing more.
 */
final class SubscriberHandler implements EventHandler<RingSlot> {
    private static final Logger LOG = LoggerFactory.getLogger(SubscriberHandler.class);

    private final String name;
    private final EventSubscriber subscriber;
    private final SingleWriterRecorder journalToSubscriber;
    private final boolean journaled;
    private final BatchEventView batchView = new BatchEventView();
    /**
     * Single-writer counters (the subscriber's thread), Disruptor {@link Sequence}s: a release store to publish, an
     * acquire load to read, padded. A volatile {@code ++} cost a full fence per event on the subscriber's thread.
     */
    private final Sequence delivered = new Sequence(0);
    private final Sequence failures = new Sequence(0);
    private volatile boolean stopped;

    SubscriberHandler(String name, EventSubscriber subscriber, SingleWriterRecorder journalToSubscriber, boolean journaled) {
        this.name = name;
        this.subscriber = subscriber;
        this.journalToSubscriber = journalToSubscriber;
        this.journaled = journaled;
    }

    @Override
    public void onEvent(RingSlot slot, long sequence, boolean endOfBatch) {
        if (slot.cancelled || stopped) {
            return;
        }
        if (slot.publishNanos != 0) { // sampled for latency (PartitionRing.LATENCY_SAMPLE_MASK)
            long from = journaled ? slot.journalNanos : slot.publishNanos;
            journalToSubscriber.recordValue(Math.max(0, System.nanoTime() - from));
        }
        if (!slot.isBatch()) {
            deliver(slot, endOfBatch);
            return;
        }
        batchView.open(slot);
        while (batchView.hasNext() && !stopped) {
            EventView event = batchView.next();
            deliver(event, endOfBatch && !batchView.hasNext());
        }
    }

    private void deliver(EventView event, boolean endOfBatch) {
        delivered.set(delivered.get() + 1);
        try {
            subscriber.onEvent(event, endOfBatch);
        } catch (Throwable t) {
            long failed = failures.get() + 1;
            failures.set(failed);
            if (failed == 1 || failed % 1000 == 0) {
                LOG.error("subscriber '{}' failed on {}-{} ({} failures so far)", name, event.topic(), event.partition(), failed, t);
            }
        }
    }

    void stop() {
        stopped = true;
    }

    /** Any thread. */
    long delivered() {
        return delivered.get();
    }

    /** Any thread. */
    long failures() {
        return failures.get();
    }
}
