package io.sluice.core;

/**
 * A live in-process subscriber on the bus: it runs on its own named thread after the journal writer in the
 * Disruptor dependency graph, so it only sees events that are already journaled. It sees events published
 * after it subscribed; for replay from an offset use a {@link Consumer}. A slow subscriber back-pressures
 * producers (the ring is bounded): keep it fast.
 */
@FunctionalInterface
public interface EventSubscriber {
    /**
     * @param endOfBatch true for the last event currently available: the place to flush batched I/O
     */
    void onEvent(EventView event, boolean endOfBatch) throws Exception;
}
