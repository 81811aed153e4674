package io.sluice.bench.scenario.redis;

import io.lettuce.core.RedisClient;

/** The baseline: the publisher thread itself pipelines XADDs to Redis with Lettuce (no bus, no journal). */
final class RawLettucePublisher implements Publisher {
    private final PipelinedXadd xadd;
    private final boolean flushEach;

    /** @param flushEach flush after every command (paced runs: lowest latency) instead of every 64 */
    RawLettucePublisher(RedisClient client, boolean flushEach) {
        this.xadd = new PipelinedXadd(client, null);
        this.flushEach = flushEach;
    }

    @Override
    public void target(byte[] stream) {
        xadd.target(stream);
    }

    @Override
    public void publish(byte[] envelope) throws Exception {
        xadd.xadd(envelope);
        if (flushEach) {
            xadd.flush();
        }
    }

    @Override
    public void flush() throws Exception {
        xadd.drain();
    }

    @Override
    public void close() {
        xadd.close();
    }
}
