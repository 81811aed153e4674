package io.sluice.ingest.internal;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.TopicPartition;
import io.sluice.ingest.Guarantee;

import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * What a strategy does with the records {@link IngestEngine} reads: the engine owns batching, ordering, commits and
 * supervision (the Kafka Connect {@code SinkTask} shape: put → flush → commit); a sink only adds records to a batch
 * and lands a batch. A batch's identity is the source's: a partition and an offset range [from, to) (for a Redis
 * stream member, positions of its {@link EntryLedger}: the batch's first and last entry id).
 *
 * <p>Threads: {@link #insert} runs on the engine's insert threads (up to {@code max.in.flight} per shard at once);
 * every other method on the engine's poller thread, except {@link #metrics}, {@link #guarantee} and
 * {@link #lastFailure}, which anyone may call.
 *
 * @param <B> the sink's batch (rows being encoded, or writes awaiting their acknowledgement)
 */
public interface BatchSink<B> extends AutoCloseable {

    /** Connects and checks the target; called before every attempt of the engine's loop. Idempotent once it succeeded. */
    void open();

    /** What the sink promises about its rows (null until {@link #open} succeeded). */
    Guarantee guarantee();

    /** Counters of this sink (see {@link io.sluice.ingest.IngestMetrics#snapshot()}). */
    Map<String, Number> metrics();

    /** A failure being retried inside an insert right now (the pipeline is then retrying), or null. */
    String lastFailure();

    /** Shards the sink inserts into; {@code max.in.flight} applies per shard. */
    default int shards() {
        return 1;
    }

    default int shardOf(TopicPartition partition) {
        return 0;
    }

    /** An empty batch, sized like the partition's last one. */
    B newBatch(int rowsHint, int bytesHint);

    /**
     * Bytes in the batch (for {@code batch.bytes}) and rows (for sizing the next one, and for {@code batch.rows} when a
     * record holds several rows, as a packed stream entry does).
     */
    int bytes(B batch);

    int rows(B batch);

    /**
     * Adds a record to the batch, or dead-letters it if it cannot be a row. Returns false, having added nothing,
     * when the sink cannot take it now (back-pressure): the engine reads it again later.
     */
    boolean add(B batch, ConsumerRecord record);

    /**
     * Lands a batch: returns once it is in the target (or dead-lettered), throws if it is not. Retries inside until
     * {@code abandoned} turns true (the partition was revoked, the loop restarted or is closing).
     */
    void insert(TopicPartition partition, long from, long to, B batch, BooleanSupplier abandoned) throws Exception;

    /**
     * True when two batches of one partition must not be inserted at the same time (the offset-range idempotent
     * insert: its batches of a slot share one query id): the engine sends them one after the other.
     */
    default boolean onePerPartition() {
        return false;
    }

    /** True if rows already in the target at or after the committed offset should be skipped on (re)assignment. */
    default boolean skipsLanded() {
        return false;
    }

    /** The offsets of {@code partition} in [from, toInclusive] already in the target. */
    default Set<Long> landed(TopicPartition partition, long from, long toInclusive) {
        return Set.of();
    }

    /** Counts a record skipped because it already landed. */
    default void skipped(ConsumerRecord record) {
    }

    /** Retries inside inserts stop after this many ms (closing). */
    default void giveUpAfter(long timeoutMs) {
    }

    @Override
    void close();
}
