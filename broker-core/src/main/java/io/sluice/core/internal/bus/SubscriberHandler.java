package io.sluice.core.internal.bus;

import com.lmax.disruptor.EventHandler;
import io.sluice.core.EventSubscriber;
import io.sluice.core.EventView;
import org.HdrHistogram.SingleWriterRecorder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs a user {@link EventSubscriber} on its own thread; its failures are counted and logged, never fatal. */
final class SubscriberHandler implements EventHandler<RingSlot> {
    private static final Logger LOG = LoggerFactory.getLogger(SubscriberHandler.class);

    private final String name;
    private final EventSubscriber subscriber;
    private final SingleWriterRecorder journalToSubscriber;
    private final boolean journaled;
    private final BatchEventView batchView = new BatchEventView();
    private volatile long delivered;
    private volatile long failures;

    SubscriberHandler(String name, EventSubscriber subscriber, SingleWriterRecorder journalToSubscriber, boolean journaled) {
        this.name = name;
        this.subscriber = subscriber;
        this.journalToSubscriber = journalToSubscriber;
        this.journaled = journaled;
    }

    @Override
    public void onEvent(RingSlot slot, long sequence, boolean endOfBatch) {
        if (slot.cancelled) {
            return;
        }
        long from = journaled ? slot.journalNanos : slot.publishNanos;
        journalToSubscriber.recordValue(Math.max(0, System.nanoTime() - from));
        if (!slot.isBatch()) {
            deliver(slot, endOfBatch);
            return;
        }
        batchView.open(slot);
        while (batchView.hasNext()) {
            batchView.next();
            deliver(batchView, endOfBatch && !batchView.hasNext());
        }
    }

    private void deliver(EventView event, boolean endOfBatch) {
        delivered++;
        try {
            subscriber.onEvent(event, endOfBatch);
        } catch (Throwable t) {
            failures++;
            if (failures == 1 || failures % 1000 == 0) {
                LOG.error("subscriber '{}' failed on {}-{} ({} failures so far)", name, event.topic(), event.partition(), failures, t);
            }
        }
    }

    long delivered() {
        return delivered;
    }

    long failures() {
        return failures;
    }
}
