package io.sluice.core;

/**
 * A live in-process subscriber on the bus: it runs after the journal writer in the Disruptor dependency graph, so it
 * only sees events that are already journaled. It sees events published after it subscribed; for replay from an
 * offset use a {@link Consumer}. It is called on one of the broker's shared subscriber threads
 * ({@code sluice-subscriber-N}, {@link BrokerConfig#subscriberThreads()}), always the same one for a partition, which
 * takes turns with the other partitions' subscribers on that thread. A slow subscriber back-pressures producers (the
 * ring is bounded) and delays the subscribers sharing its thread: keep it fast, never block.
 */
@FunctionalInterface
public interface EventSubscriber {
    /**
     * @param endOfBatch true for the last event currently available (or the 256th in a row, when the thread moves on
     *                   to another partition's turn): the place to flush batched I/O
     */
    void onEvent(EventView event, boolean endOfBatch) throws Exception;
}
