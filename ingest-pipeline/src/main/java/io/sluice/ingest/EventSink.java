package io.sluice.ingest;

import io.sluice.ingest.internal.Sinks;

import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The write side of the sync, async, coalescing, redis-stream and worker-pool strategies: events in, rows in
 * ClickHouse. Thread-safe. What completion of {@link #write}'s future means depends on the strategy:
 * <ul>
 *   <li>sync — the row is in ClickHouse ({@code write} itself blocks for the INSERT);</li>
 *   <li>async — the server accepted the INSERT into its async queue / Buffer table (lost if the server crashes
 *       before flushing: at-most-once);</li>
 *   <li>coalescing — the batch holding the row is in ClickHouse;</li>
 *   <li>redis-stream, worker-pool — the entry is in the Redis stream (XADD acknowledged); it reaches ClickHouse
 *       later, at least once, and is never trimmed before (see {@link #metrics()} lag).</li>
 * </ul>
 * A row ClickHouse rejects completes its future with {@link IngestException.RowRejectedException} (coalescing,
 * sync, async) after going to the dead letters.
 */
public interface EventSink extends AutoCloseable {

    /** Opens the sink of {@code config.strategy()} (every strategy with {@link Strategy#hasEventSink()}; offset-range runs in an {@link IngestPipeline}). */
    static EventSink open(IngestConfig config) {
        return Sinks.open(config);
    }

    /**
     * Accepts one event (a JSON object, or an event for the configured {@link RowEncoder}).
     *
     * @throws IllegalArgumentException                               if the event is not a JSON object / cannot be encoded: nothing was accepted
     * @throws io.sluice.core.SluiceException.BackPressureException if the buffer stayed full for {@code block.ms}: nothing was accepted
     * @throws io.sluice.core.SluiceException.ClosedException       after close
     */
    CompletableFuture<Void> write(byte[] event);

    /** What this sink promises about its rows (see {@link Guarantee}); logged at start. */
    default Guarantee guarantee() {
        return Guarantee.AT_LEAST_ONCE;
    }

    /** Waits until everything accepted before the call is in ClickHouse (or dead-lettered / failed). */
    void flush();

    /** Counters and insert latency percentiles (see {@link IngestMetrics#snapshot()}). */
    Map<String, Number> metrics();

    /** Stops accepting, lands what was accepted (up to {@code close.timeout.ms}), stops threads. Idempotent. */
    @Override
    void close();
}
