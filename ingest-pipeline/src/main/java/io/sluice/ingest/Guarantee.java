package io.sluice.ingest;

/**
 * What a pipeline promises about its rows in ClickHouse, decided at start from what the server and the table
 * offer, logged at start-up and exported by the broker ({@code sluice_ingest_guarantee{pipeline,guarantee}} on
 * {@code /metrics}, and in {@code /health}). Every mode is "no loss": an offset is committed only after its
 * row is in ClickHouse or dead-lettered; they differ in what a retried or late INSERT can do.
 */
public enum Guarantee {
    /**
     * Journal, table with {@code _sluice_partition}/{@code _sluice_offset}, any server (18.16 included): each batch is
     * {@code INSERT INTO t SELECT ... FROM <the request's external data> WHERE offset NOT IN (rows of the range
     * already in t)}, with one {@code query_id} per aligned offset slot, so two copies of a range never run at once
     * (the server refuses the second, code 216) and a copy that arrives late finds its rows present and adds nothing.
     */
    EXACTLY_ONCE_IDEMPOTENT_INSERT("exactly-once-idempotent-insert"),
    /**
     * Journal, offset columns, {@code Replicated*MergeTree}. On one server: the idempotent insert above (same slot query
     * ids, so members with different batch settings are excluded), refused while a row of the range is in a part not
     * registered in ZooKeeper (what a {@code 319} leaves behind). On the shards of a cluster ({@code clickhouse.shards})
     * the same statement, sent to the shard's writer replica and refused there unless that replica is the writer by
     * rank and ZooKeeper session and holds every part the others committed, so replica failovers keep the
     * exclusion (docs/ingest.md, the writer fence). After an INSERT of unknown outcome, nothing is sent again before
     * the replicas showed what landed in registered parts.
     */
    EXACTLY_ONCE_REPLICATED_DEDUP("exactly-once-replicated-dedup"),
    /**
     * Journal, offset columns, server with {@code insert_deduplication_token} (22.2+) and a table that deduplicates
     * inserts ({@code non_replicated_deduplication_window}): every retry of a range carries the range as its token.
     */
    EXACTLY_ONCE_DEDUP_TOKEN("exactly-once-dedup-token"),
    /** No offset (or entry) columns, or a strategy that retries timed-out INSERTs blindly: a retried INSERT may land twice. */
    AT_LEAST_ONCE("at-least-once"),
    /** Stream strategies with {@code _sluice_entry}/{@code _sluice_index}: idempotent INSERT ... SELECT per batch of entries. */
    EXACTLY_ONCE_ENTRY_COLUMNS("exactly-once-entry-columns"),
    /** {@code async}: acknowledged when the server queued it; a server crash loses the queue. */
    AT_MOST_ONCE("at-most-once");

    private final String label;

    Guarantee(String label) {
        this.label = label;
    }

    /** The label used in logs and metrics, e.g. {@code exactly-once-idempotent-insert}. */
    public String label() {
        return label;
    }

    @Override
    public String toString() {
        return label;
    }
}
