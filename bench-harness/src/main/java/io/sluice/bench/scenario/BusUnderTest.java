package io.sluice.bench.scenario;

/** A bus the event-bus scenario drives: Sluice or the raw Disruptor ring. */
interface BusUnderTest extends AutoCloseable {
    /** Publishes pre-built message {@code id} to partition {@code id % partitions}; false when back-pressured. */
    boolean tryPublish(int id);

    /** Send failures reported asynchronously (callbacks); must stay 0. */
    long errors();

    @Override
    void close() throws Exception;
}
