package io.sluice.bench.scenario.redis;

/** The sending side of the redis-e2e scenario: Sluice's {@code RedisStreamsProducer} or raw Lettuce. */
interface Publisher extends AutoCloseable {
    /** Sends one envelope to the topic's stream; may block for back-pressure. */
    void publish(String topic, byte[] envelope) throws Exception;

    /** Waits until everything sent was acknowledged by Redis; throws if a send failed. */
    void flush() throws Exception;

    @Override
    void close() throws Exception;
}
