package io.sluice.ingest.internal;

import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.IngestMetrics;

import java.time.Duration;
import java.util.Map;

/** What every sink shares: the ClickHouse connection, target description, row format, inserter and metrics. */
final class SinkContext implements AutoCloseable {
    final IngestConfig config;
    final ClickHouseHttp http;
    final ClickHouseTarget target;
    final RowFormat format;
    final IngestMetrics metrics;
    private volatile long giveUpAtNanos = Long.MAX_VALUE;

    SinkContext(IngestConfig config, RowFormat.Provenance wanted) {
        this(config, wanted, new IngestMetrics());
    }

    SinkContext(IngestConfig config, RowFormat.Provenance wanted, IngestMetrics metrics) {
        this.config = config;
        this.metrics = metrics;
        // a cluster target: shard 1's replicas hold the table description and the dead-letter table
        this.http = new ClickHouseHttp(config.shards().isEmpty() ? java.util.List.of(config.clickHouseUrl()) : config.shards().get(0), config.user(), config.password(),
                Duration.ofMillis(config.insertTimeoutMs()), config.name());
        this.target = ClickHouseTarget.open(config, http);
        boolean available = wanted == RowFormat.Provenance.OFFSETS ? target.hasOffsetColumns()
                : wanted == RowFormat.Provenance.ENTRIES && target.hasEntryColumns();
        this.format = new RowFormat(config.table(), config.rowEncoder(), available ? wanted : RowFormat.Provenance.NONE);
    }

    /** Closes the ClickHouse client (its executor); the owning sink calls it last in its close. */
    @Override
    public void close() {
        http.close();
    }

    /** After close's deadline, retry loops stop and report failure instead of waiting for ClickHouse. */
    void giveUpAfter(long timeoutMs) {
        giveUpAtNanos = System.nanoTime() + timeoutMs * 1_000_000L;
    }

    boolean givingUp() {
        return System.nanoTime() - giveUpAtNanos >= 0;
    }

    BatchInserter inserter(RowFormat rowFormat, Map<String, String> settings, DeadLetters deadLetters) {
        return inserter(http, rowFormat, settings, deadLetters);
    }

    /** An inserter into another server of the target (a shard of a cluster). */
    BatchInserter inserter(ClickHouseHttp to, RowFormat rowFormat, Map<String, String> settings, DeadLetters deadLetters) {
        return new BatchInserter(to, rowFormat, settings, deadLetters, metrics, config.retryInitialMs(), config.retryMaxMs(), this::givingUp);
    }

    private DeadLetters deadLetters;

    /** The dead-letter table (created on first use). */
    synchronized DeadLetters clickHouseDeadLetters() {
        if (deadLetters == null) {
            deadLetters = new ClickHouseDeadLetters(http, config.deadLetterTable(), config.name(), config.retryInitialMs(),
                    config.retryMaxMs(), this::givingUp);
        }
        return deadLetters;
    }
}
