package io.sluice.core.internal.bus;

import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.EventPoller;
import com.lmax.disruptor.Sequence;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.LongSupplier;

/**
 * One consumer of a partition ring, polled by whichever {@link StageAgent} it is assigned to: the partition's journal
 * writer, or one live subscriber. A Disruptor {@link EventPoller} (the poll-based twin of a
 * {@code BatchEventProcessor}) drives an ordinary {@link EventHandler}; a poll hands over what is available, at most
 * {@code maxBatch} events, and the last event of a poll is the handler's end of batch. A handler failure is logged and
 * the event skipped, as a {@code BatchEventProcessor} with a logging exception handler does: one bad event must not
 * stop the partition, nor the other partitions sharing the thread.
 */
final class PolledStage implements EventPoller.Handler<RingSlot> {
    private static final Logger LOG = LoggerFactory.getLogger(PolledStage.class);

    private final String name;
    private final EventPoller<RingSlot> poller;
    private final LongSupplier follows;
    private final EventHandler<RingSlot> handler;
    private final int maxBatch;
    private final Runnable onRemoved;
    private int polled;

    /**
     * @param follows   the sequence the poller gates on: the ring's cursor, or the journal writer's sequence
     * @param onRemoved run on the agent's thread after the stage's last poll (the journal writer closes its appender)
     */
    PolledStage(String name, EventPoller<RingSlot> poller, LongSupplier follows, EventHandler<RingSlot> handler, int maxBatch,
                Runnable onRemoved) {
        this.name = name;
        this.poller = poller;
        this.follows = follows;
        this.handler = handler;
        this.maxBatch = maxBatch;
        this.onRemoved = onRemoved;
    }

    /** This stage's progress: the last sequence it has handled. */
    Sequence sequence() {
        return poller.getSequence();
    }

    /** Handles what is available (at most {@code maxBatch} events); returns how many. Agent thread only. */
    int poll() {
        polled = 0;
        long before = poller.getSequence().get();
        try {
            poller.poll(this);
        } catch (Exception e) { // onEvent catches everything: not reached
            LOG.error("{}: poll failed", name, e);
        }
        return (int) (poller.getSequence().get() - before);
    }

    @Override
    public boolean onEvent(RingSlot slot, long sequence, boolean endOfBatch) {
        boolean last = endOfBatch || ++polled >= maxBatch;
        try {
            handler.onEvent(slot, sequence, last);
        } catch (Throwable t) {
            LOG.error("{}: unexpected failure at sequence {}; the event is skipped", name, sequence, t);
        }
        return !last;
    }

    /** True if an event waits for this stage (the idle check before parking: {@link WakeableIdleStrategy}). */
    boolean hasWork() {
        return follows.getAsLong() > poller.getSequence().get();
    }

    void removed() {
        if (onRemoved != null) {
            onRemoved.run();
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
