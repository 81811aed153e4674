package io.sluice.ingest;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of one pipeline, updated by its threads and read by {@link #snapshot()} (the broker exports the
 * snapshot on /metrics with the prefix {@code sluice_ingest_}). Lag = events accepted but not yet in ClickHouse
 * nor dead-lettered.
 */
public final class IngestMetrics {
    private final LongAdder accepted = new LongAdder();
    private final LongAdder rowsInserted = new LongAdder();
    private final LongAdder batches = new LongAdder();
    private final LongAdder retries = new LongAdder();
    private final LongAdder deadLettered = new LongAdder();
    private final LongAdder duplicatesSkipped = new LongAdder();
    private final Recorder latency = new Recorder(TimeUnit.MINUTES.toMicros(10), 3);
    private final Histogram total = new Histogram(TimeUnit.MINUTES.toMicros(10), 3);
    private Histogram interval;
    private volatile String lastFailure;

    public void accepted(long events) {
        accepted.add(events);
    }

    /** A batch INSERT of {@code rows} rows succeeded after {@code nanos}. */
    public void inserted(int rows, long nanos) {
        rowsInserted.add(rows);
        batches.increment();
        latency.recordValue(Math.min(TimeUnit.NANOSECONDS.toMicros(nanos), TimeUnit.MINUTES.toMicros(10)));
    }

    /** A transient failure is being retried: {@code reason} is what the server or the network said. */
    public void failing(String reason) {
        lastFailure = reason;
    }

    /** A retried operation succeeded. */
    public void recovered() {
        lastFailure = null;
    }

    /** The failure being retried now, or null. */
    public String lastFailure() {
        return lastFailure;
    }

    public void retried() {
        retries.increment();
    }

    public void deadLettered(long rows) {
        deadLettered.add(rows);
    }

    /** Rows found already in ClickHouse on recovery and not inserted again. */
    public void duplicatesSkipped(long rows) {
        duplicatesSkipped.add(rows);
    }

    public long rowsInserted() {
        return rowsInserted.sum();
    }

    public long deadLettered() {
        return deadLettered.sum();
    }

    public long lag() {
        return Math.max(0, accepted.sum() - rowsInserted.sum() - deadLettered.sum() - duplicatesSkipped.sum());
    }

    /**
     * Names → values: events_accepted, rows_inserted, batches, retries, dead_lettered, duplicates_skipped, lag,
     * insert_latency_{p50,p99,p999,max}_ms (over the pipeline's life).
     */
    public synchronized Map<String, Number> snapshot() {
        interval = latency.getIntervalHistogram(interval);
        total.add(interval);
        Map<String, Number> m = new LinkedHashMap<>();
        m.put("events_accepted", accepted.sum());
        m.put("rows_inserted", rowsInserted.sum());
        m.put("batches", batches.sum());
        m.put("retries", retries.sum());
        m.put("dead_lettered", deadLettered.sum());
        m.put("duplicates_skipped", duplicatesSkipped.sum());
        m.put("lag", lag());
        m.put("insert_latency_p50_ms", total.getValueAtPercentile(50) / 1000.0);
        m.put("insert_latency_p99_ms", total.getValueAtPercentile(99) / 1000.0);
        m.put("insert_latency_p999_ms", total.getValueAtPercentile(99.9) / 1000.0);
        m.put("insert_latency_max_ms", total.getMaxValue() / 1000.0);
        return m;
    }
}
