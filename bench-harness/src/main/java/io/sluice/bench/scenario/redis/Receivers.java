package io.sluice.bench.scenario.redis;

import java.util.List;

/** The receiving side of one run: two members of one consumer group, each on its own thread. */
interface Receivers extends AutoCloseable {
    /** The receiving threads (their CPU time is the transport's). */
    List<Thread> threads();

    /** Stops the threads (waits for them). */
    void stop() throws InterruptedException;

    Throwable failure();

    @Override
    void close() throws Exception;
}
