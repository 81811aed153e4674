package io.sluice.bench.scenario.redis;

/** The sending side of the redis-e2e scenario: Sluice (bus → journal → Redis writer) or raw Lettuce. */
interface Publisher extends AutoCloseable {
    /** Where the next events go (a new stream per run); called while nothing is in flight. */
    void target(byte[] stream);

    /** Sends one envelope; may block briefly for back-pressure. */
    void publish(byte[] envelope) throws Exception;

    /** Pushes out anything batched. */
    void flush() throws Exception;

    @Override
    void close() throws Exception;
}
