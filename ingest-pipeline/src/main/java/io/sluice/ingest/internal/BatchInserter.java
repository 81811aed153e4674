package io.sluice.ingest.internal;

import io.sluice.ingest.IngestException;
import io.sluice.ingest.IngestMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * Lands one {@link RowBatch}: one INSERT; transient failures (ClickHouse down, slow, overloaded) are retried with
 * bounded exponential backoff until they succeed or the owner gives up (close deadline); a batch the server
 * rejects for its data is bisected until the bad rows are isolated — they are dead-lettered with the server's
 * message, the rest lands. Cost of a rejection: about 2·log2(rows) extra INSERTs per bad row.
 *
 * <p>Atomicity used here: ClickHouse writes an INSERT of at most {@code max_insert_block_size} (1,048,576) rows
 * as one block, all or nothing (batch.rows is capped at 1,000,000), so a rejected INSERT left nothing behind and
 * its halves can be re-sent without doubling rows.
 */
public final class BatchInserter {
    private static final Logger LOG = LoggerFactory.getLogger(BatchInserter.class);

    /** Called before a batch is sent again after a transient failure; may drop rows known to have landed. */
    public interface RetryHook<T> {
        RowBatch<T> beforeRetry(RowBatch<T> batch, IngestException failure);
    }

    /** A row of the batch that went to the dead letters. */
    public record Rejected<T>(T tag, String error) {
    }

    private final ClickHouseHttp http;
    private final RowFormat format;
    private final Map<String, String> settings;
    private final DeadLetters deadLetters;
    private final IngestMetrics metrics;
    private final long retryInitialMs;
    private final long retryMaxMs;
    private final BooleanSupplier giveUp;

    public BatchInserter(ClickHouseHttp http, RowFormat format, Map<String, String> settings, DeadLetters deadLetters,
                         IngestMetrics metrics, long retryInitialMs, long retryMaxMs, BooleanSupplier giveUp) {
        this.http = http;
        this.format = format;
        this.settings = settings;
        this.deadLetters = deadLetters;
        this.metrics = metrics;
        this.retryInitialMs = retryInitialMs;
        this.retryMaxMs = retryMaxMs;
        this.giveUp = giveUp;
    }

    public RowFormat format() {
        return format;
    }

    /**
     * Returns once every row is in ClickHouse or dead-lettered (the returned list).
     *
     * @param source   describes a row for its dead letter (e.g. its stream id or topic/partition/offset)
     * @throws IngestException if the owner gave up while ClickHouse kept failing; nothing is reported landed then
     */
    public <T> List<Rejected<T>> insert(RowBatch<T> batch, RetryHook<T> hook, Function<T, String> source) {
        return insert(batch, hook, source, settings);
    }

    /**
     * As {@link #insert(RowBatch, RetryHook, Function)} with settings for the whole batch (e.g. an
     * {@code insert_deduplication_token}); halves of a bisected batch are sent with the base settings.
     */
    public <T> List<Rejected<T>> insert(RowBatch<T> batch, RetryHook<T> hook, Function<T, String> source,
                                        Map<String, String> batchSettings) {
        return insert(batch, hook, source, batchSettings, null, giveUp);
    }

    /**
     * As {@link #insert(RowBatch, RetryHook, Function, Map)}, and:
     *
     * @param idempotent when not null, every attempt at a (sub)batch is the statement it returns, sent with the
     *                   rows as external data ({@link IdempotentInsert}): the server skips rows already present, so
     *                   a retry, a late copy, a partial landing and the halves of a bisection never double a row
     * @param abandon    checked before every retry: true stops retrying (the owner no longer wants the batch, or
     *                   gives up) and throws the last failure
     */
    public <T> List<Rejected<T>> insert(RowBatch<T> batch, RetryHook<T> hook, Function<T, String> source,
                                        Map<String, String> batchSettings,
                                        Function<RowBatch<T>, IdempotentInsert.Statement> idempotent, BooleanSupplier abandon) {
        List<Rejected<T>> rejected = new ArrayList<>(0);
        List<DeadLetters.Letter> letters = new ArrayList<>(0);
        insertRange(batch, hook, source, rejected, letters, batchSettings, idempotent, abandon);
        if (!letters.isEmpty()) {
            deadLetters.write(letters);
            metrics.deadLettered(letters.size());
        }
        return rejected;
    }

    private <T> void insertRange(RowBatch<T> batch, RetryHook<T> hook, Function<T, String> source,
                                 List<Rejected<T>> rejected, List<DeadLetters.Letter> letters, Map<String, String> sendSettings,
                                 Function<RowBatch<T>, IdempotentInsert.Statement> idempotent, BooleanSupplier abandon) {
        Backoff backoff = null;
        int attempt = 0;
        while (!batch.isEmpty()) {
            long start = System.nanoTime();
            try {
                // built for every attempt: on a cluster target it names the replica the attempt goes to (ShardWriter)
                IdempotentInsert.Statement statement = idempotent == null ? null : idempotent.apply(batch);
                if (statement != null) {
                    http.insertExternal(statement, sendSettings, batch.array(), 0, batch.bytes());
                } else {
                    http.insert(format.insertSql(), sendSettings, batch.array(), 0, batch.bytes());
                }
                metrics.inserted(batch.rows(), System.nanoTime() - start);
                if (attempt > 0) {
                    metrics.recovered();
                }
                return;
            } catch (IngestException e) {
                if (e.isDataError()) {
                    if (batch.rows() == 1) {
                        rejected.add(new Rejected<>(batch.tag(0), e.getMessage()));
                        letters.add(new DeadLetters.Letter(format.rowBytes(batch, 0), e.getMessage(), source.apply(batch.tag(0))));
                        return;
                    }
                    // Without an idempotent statement this relies on a rejected INSERT of at most
                    // max_insert_block_size rows having left nothing behind; with one, rows that did land are skipped
                    int mid = batch.rows() / 2;
                    insertRange(batch.select(0, mid, t -> true), hook, source, rejected, letters, settings, idempotent, abandon);
                    insertRange(batch.select(mid, batch.rows(), t -> true), hook, source, rejected, letters, settings, idempotent, abandon);
                    return;
                }
                if (abandon.getAsBoolean()) {
                    throw e;
                }
                metrics.retried();
                metrics.failing(e.isSchemaError() ? "schema error (the table no longer matches the rows): " + e.getMessage()
                        : e.getMessage());
                if (attempt++ % 20 == 0) {
                    if (e.isSchemaError()) {
                        LOG.error("INSERT of {} rows refused because the table changed (schema drift; not a bad row, nothing"
                                + " dead-lettered), retrying with backoff until it is fixed: {}", batch.rows(), e.getMessage());
                    } else {
                        LOG.warn("INSERT of {} rows failed (attempt {}), retrying with backoff: {}", batch.rows(), attempt, e.getMessage());
                    }
                }
                if (backoff == null) {
                    backoff = new Backoff(retryInitialMs, retryMaxMs);
                }
                try {
                    backoff.pause();
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
                if (hook != null) {
                    batch = hook.beforeRetry(batch, e);
                }
            }
        }
    }
}
