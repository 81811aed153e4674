package io.sluice.core;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Sends events to topics. Thread-safe: share one producer between threads. Embedded producers come from
 * {@code Broker.newProducer(ProducerConfig)} in broker-core; the networked client in sluice-client implements the same interface.
 */
public interface Producer extends AutoCloseable {

    /** {@link #trySend} result: the record was accepted (its callback will be invoked). */
    long ACCEPTED = 0;
    /** {@link #trySend} result: the partition ring (or client buffer) is full. Nothing was taken; retry later. */
    long BACK_PRESSURED = -1;
    /** {@link #trySend} result: the producer or broker is closed. */
    long CLOSED = -2;

    /**
     * Sends asynchronously. Blocks at most {@link ProducerConfig#maxBlockMillis()} when the ring is full; the
     * future then fails with {@link BackPressureException}. Unknown topics, oversized records and a closed broker
     * fail the future with the matching {@link SluiceException}.
     */
    CompletableFuture<RecordMetadata> send(ProducerRecord record);

    /** Like {@link #send(ProducerRecord)} but completes through a callback (no future allocated). */
    void send(ProducerRecord record, SendCallback callback);

    /**
     * Never blocks: returns {@link #ACCEPTED}, {@link #BACK_PRESSURED} or {@link #CLOSED}. Other errors (unknown topic,
     * record too large) are thrown as {@link SluiceException}, since retrying cannot fix them.
     */
    long trySend(ProducerRecord record, SendCallback callback);

    /** Sends each record in order; one future per record. */
    List<CompletableFuture<RecordMetadata>> sendBatch(List<ProducerRecord> records);

    /** Blocks until every send issued before this call has completed (successfully or not). */
    void flush();

    /** Flushes, then releases the producer. Safe to call twice. */
    @Override
    void close();
}
