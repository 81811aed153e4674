package io.sluice.core;

import java.util.List;

/**
 * A flyweight over one journaled event on a partition ring, valid only during
 * {@link EventSubscriber#onEvent(EventView, boolean)}: copy what you keep.
 */
public interface EventView {
    String topic();

    int partition();

    /** Dense partition offset; -1 for a topic without a journal. */
    long offset();

    long timestamp();

    /** Key bytes or null. The array may be larger than {@link #keyLength()}: read {@code [0, keyLength)}. */
    byte[] keyBuffer();

    int keyLength();

    /** Value bytes; the array may be larger than {@link #valueLength()}: read {@code [0, valueLength)}. */
    byte[] valueBuffer();

    int valueLength();

    /** The event's headers (decoded on each call for an event of a producer batch: keep the list if you need it twice). */
    List<Header> headers();

    /**
     * System.nanoTime() when the producer published it, for the events Sluice samples for its own latency metrics
     * (one single event in 64, by its position on the partition ring, and every producer batch); 0 for the others.
     */
    long publishNanos();
}
