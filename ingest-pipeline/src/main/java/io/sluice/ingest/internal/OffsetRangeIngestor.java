package io.sluice.ingest.internal;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.TopicPartition;
import io.sluice.ingest.Guarantee;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.IngestException;
import io.sluice.ingest.IngestMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * Strategy offset-range: what {@link IngestEngine} does with a batch read from a Sluice (or Kafka) topic. A batch
 * is an offset range of one partition (the engine cuts them at multiples of {@code batch.rows}, so a full batch is
 * the same range after a restart, and at the boundaries of the fixed exclusion slots of {@link IdempotentInsert#SLOT}
 * offsets, the same whatever the settings); every
 * attempt at a batch sends the same rows in the same order, as one INSERT into the partition's shard.
 *
 * <p><b>Guarantee</b> ({@link Guarantee}, chosen at start from what the server and the table offer, logged, and
 * exported): no loss — the engine commits an offset only after its row is in ClickHouse (or dead-lettered), and a
 * batch that failed makes it start again from the committed offsets instead of committing past it. Duplicates:
 * <ul>
 *   <li>offset columns, any server: {@link Guarantee#EXACTLY_ONCE_IDEMPOTENT_INSERT} ({@link IdempotentInsert},
 *       query id {@code sluice-<table>-<topic>-<partition>-s<slot>}, a partition's batches one at a time);</li>
 *   <li>offset columns, {@code Replicated*MergeTree}: {@link Guarantee#EXACTLY_ONCE_REPLICATED_DEDUP}: on one server
 *       ({@code clickhouse.url}) the same idempotent insert with the same slot query ids, refused while a row of the
 *       range is in a part not registered in ZooKeeper ({@link IdempotentInsert#onReplica}), so members with
 *       different batch settings are excluded as on a plain table; on the shards of a cluster
 *       ({@code clickhouse.shards}) the same statement, sent to the shard's writer replica and fenced there
 *       ({@link ShardWriter}: the writer by rank and ZooKeeper session, caught up with the other replicas), so the
 *       slot query id excludes as on one server, replica failovers included;</li>
 *   <li>offset columns, {@code insert_deduplication_token} and a deduplicating table:
 *       {@link Guarantee#EXACTLY_ONCE_DEDUP_TOKEN};</li>
 *   <li>no offset columns: {@link Guarantee#AT_LEAST_ONCE}.</li>
 * </ul>
 * With offset columns, rows already landed at or after a newly assigned partition's committed offset are skipped
 * ({@link #landed}).
 */
public final class OffsetRangeIngestor implements BatchSink<RowBatch<Long>> {
    private static final Logger LOG = LoggerFactory.getLogger(OffsetRangeIngestor.class);

    private final IngestConfig config;
    private final IngestMetrics metrics = new IngestMetrics();
    private volatile SinkContext ctx;
    private volatile Guarantee guarantee;
    private BatchInserter inserter;
    private IdempotentInsert idempotent;
    /** Replicated table ({@link Guarantee#EXACTLY_ONCE_REPLICATED_DEDUP}): what really landed, else null. */
    private volatile ReplicatedLanding replicated;
    private static final int UNKNOWN_STATUS_OF_INSERT = 319;
    /** One server, or the shards of a cluster target (clickhouse.shards); set with ctx. */
    private volatile Shards shards;
    /** Cluster target with a replicated table: each shard's writer and fence ({@link ShardWriter}), else null. */
    private volatile ShardWriter[] writers;
    private final int shardCount;

    public OffsetRangeIngestor(IngestConfig config) {
        this.config = config;
        this.shardCount = Math.max(1, config.shards().size());
    }

    /**
     * Checks the table (a configuration error is thrown here) and detects the guarantee.
     *
     * @throws io.sluice.core.SluiceException.InvalidConfigException if the table is missing or does not fit
     * @throws io.sluice.ingest.IngestException                      if ClickHouse does not answer (retried by the engine)
     */
    @Override
    public void open() {
        if (ctx == null) {
            openContext();
        }
    }

    private void openContext() {
        SinkContext c = new SinkContext(config, RowFormat.Provenance.OFFSETS, metrics);
        Guarantee g = choose(c.target);
        IdempotentInsert statements;
        try {
            statements = g == Guarantee.EXACTLY_ONCE_IDEMPOTENT_INSERT
                    ? new IdempotentInsert(c.target, config.rowEncoder(), RowFormat.Provenance.OFFSETS)
                    : g == Guarantee.EXACTLY_ONCE_REPLICATED_DEDUP && config.shards().isEmpty()
                    ? IdempotentInsert.onReplica(c.target, config.rowEncoder(), replicaPath(c)) : null;
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        this.inserter = c.inserter(c.format, Map.of(), c.clickHouseDeadLetters());
        this.shards = Shards.open(c, inserter);
        if (g == Guarantee.EXACTLY_ONCE_REPLICATED_DEDUP && !config.shards().isEmpty()) {
            ShardWriter[] w = new ShardWriter[shards.size()];
            for (int i = 0; i < w.length; i++) {
                w[i] = new ShardWriter(shards.get(i), c.target, config.rowEncoder(), config.database(), config.tableName(),
                        config.zooKeeperSessionTimeoutMs());
            }
            this.writers = w;
        }
        this.idempotent = statements;
        this.replicated = g == Guarantee.EXACTLY_ONCE_REPLICATED_DEDUP ? new ReplicatedLanding(config.database(), config.tableName()) : null;
        this.guarantee = g;
        this.ctx = c;
        switch (g) {
            case EXACTLY_ONCE_IDEMPOTENT_INSERT -> LOG.info("offset-range {}: guarantee {}: table {} ({}) has offset columns;"
                            + " each batch is an idempotent INSERT ... SELECT with one query_id per offset slot (ClickHouse {})",
                    config.name(), g, config.table(), c.target.engine(), c.target.version());
            case EXACTLY_ONCE_REPLICATED_DEDUP -> {
                if (writers != null) {
                    LOG.info("offset-range {}: guarantee {}: table {} is {} on the shards of a cluster; each batch is an"
                            + " idempotent INSERT ... SELECT with one query_id per offset slot, sent to the shard's writer"
                            + " replica and fenced there (writer by rank and ZooKeeper session, caught up with the others,"
                            + " no unregistered part of the range)", config.name(), g, config.table(), c.target.engine());
                } else if (statements != null) {
                    LOG.info("offset-range {}: guarantee {}: table {} is {} on one server; each batch is an idempotent INSERT ..."
                            + " SELECT with one query_id per offset slot, refused while a row of its range is in a part not"
                            + " registered in ZooKeeper", config.name(), g, config.table(), c.target.engine());
                } else {
                    LOG.info("offset-range {}: guarantee {}: table {} is {} on the shards of a cluster; every retry sends the"
                            + " identical block, which the server drops (members must not differ in batch settings)",
                            config.name(), g, config.table(), c.target.engine());
                }
            }
            case EXACTLY_ONCE_DEDUP_TOKEN -> LOG.info("offset-range {}: guarantee {}: ClickHouse {} deduplicates retried batches by"
                    + " insert_deduplication_token on table {}", config.name(), g, c.target.version(), config.table());
            default -> LOG.warn("offset-range {}: guarantee {}: table {} has no {}/{} columns: a retried or late INSERT may land twice",
                    config.name(), g, config.table(), ClickHouseTarget.PARTITION_COLUMN, ClickHouseTarget.OFFSET_COLUMN);
        }
    }

    /** {@code system.replicas.replica_path} of the target table on the one server of {@code c}. */
    private String replicaPath(SinkContext c) {
        String path = c.http.query("SELECT replica_path FROM system.replicas WHERE database = '" + config.database()
                + "' AND table = '" + config.tableName() + "' FORMAT TabSeparated").strip();
        if (path.isEmpty()) {
            throw new IngestException("no row in system.replicas for " + config.table(), -1, false, false, null);
        }
        return path;
    }

    /** The offset-range strategy's guarantee on this server and table (see the class comment). */
    public static Guarantee choose(ClickHouseTarget target) {
        if (!target.hasOffsetColumns()) {
            return Guarantee.AT_LEAST_ONCE;
        }
        if (target.isReplicated()) {
            return Guarantee.EXACTLY_ONCE_REPLICATED_DEDUP;
        }
        if (target.supportsSetting("insert_deduplication_token") && target.deduplicatesInserts()) {
            return Guarantee.EXACTLY_ONCE_DEDUP_TOKEN;
        }
        return Guarantee.EXACTLY_ONCE_IDEMPOTENT_INSERT;
    }

    /** One INSERT of the batch into its partition's shard (retried, split and dead-lettered by {@link BatchInserter}). */
    @Override
    public void insert(TopicPartition partition, long from, long to, RowBatch<Long> batch, BooleanSupplier abandoned) {
        InFlight f = new InFlight(partition, from, to);
        ShardWriter writer = writers == null ? null : writers[shards.indexOf(f.partition)];
        Map<String, String> settings = guarantee == Guarantee.EXACTLY_ONCE_DEDUP_TOKEN
                ? Map.of("insert_deduplication_token", config.table() + "/" + source(f.partition, f.from) + "-" + f.to)
                : writer != null ? writer.settings() : Map.of();
        Function<RowBatch<Long>, IdempotentInsert.Statement> statement = writer != null
                ? b -> writer.statement(f.partition.partition(), b.tag(0), b.tag(b.rows() - 1), queryId(f))
                : idempotent == null ? null
                : b -> idempotent.offsets(f.partition.partition(), b.tag(0), b.tag(b.rows() - 1), queryId(f));
        BooleanSupplier abandon = () -> abandoned.getAsBoolean() || ctx.givingUp();
        BatchInserter.RetryHook<Long> beforeRetry = replicated == null ? null : (b, failure) -> {
            if (writer != null) {
                writer.forget(); // the next attempt asks the replicas which may write
            }
            return resolve(f, b, failure, abandon);
        };
        shards.of(f.partition).inserter().insert(batch, beforeRetry, offset -> source(f.partition, offset), settings, statement,
                abandon);
    }

    /** With the idempotent insert a partition's batches of a slot share a query id: the engine sends them in turn. */
    @Override
    public boolean onePerPartition() {
        return idempotent != null || writers != null;
    }

    /**
     * Replicated table, before a retry: an INSERT whose outcome is unknown (319 after ZooKeeper went away, a timeout,
     * a cut connection), or an idempotent one refused because a row of its range is in an unregistered part
     * ({@link IdempotentInsert#UNREGISTERED_PART_OF_RANGE}), is first resolved on every replica of the shard
     * ({@link ReplicatedLanding}, which waits while such a part is there): landed in registered parts → nothing to
     * retry; absent → the identical block again; partly (a range cut differently before a restart) → only the rows
     * not registered.
     */
    private RowBatch<Long> resolve(InFlight f, RowBatch<Long> batch, IngestException failure, BooleanSupplier abandon) {
        boolean fenced = idempotent != null || writers != null;
        if (batch.isEmpty() || !(failure.isOutcomeUnknown() || failure.serverCode() == UNKNOWN_STATUS_OF_INSERT
                || fenced && failure.serverCode() == IdempotentInsert.UNREGISTERED_PART_OF_RANGE)) {
            return batch;
        }
        Shards.Shard shard = shards.of(f.partition);
        int p = f.partition.partition();
        long first = batch.tag(0);
        long last = batch.tag(batch.rows() - 1);
        Backoff backoff = new Backoff(config.retryInitialMs(), config.retryMaxMs());
        return switch (replicated.afterUnknownStatus(shard, p, first, last, batch.rows(), abandon, backoff,
                failure.serverCode() == IdempotentInsert.UNREGISTERED_PART_OF_RANGE && writers != null
                        ? "refused: the replica is not the shard's writer now, lacks parts the others committed, or holds a row of"
                        + " the range in a part not registered in ZooKeeper"
                        : failure.serverCode() == IdempotentInsert.UNREGISTERED_PART_OF_RANGE && fenced
                        ? "refused: a row of the range is in a part not registered in ZooKeeper"
                        : failure.serverCode() > 0 ? "code " + failure.serverCode() : "no answer")) {
            case LANDED -> batch.select(0, batch.rows(), o -> false); // nothing left to send
            case ABSENT -> batch;
            case PARTLY -> {
                Set<Long> there = replicated.registeredOffsets(shard, p, first, last);
                yield batch.select(0, batch.rows(), o -> !there.contains(o));
            }
        };
    }

    /**
     * One id per fixed offset slot ({@link IdempotentInsert#SLOT}, independent of every setting): every batch lies
     * inside one slot, so two overlapping batches (a retry, a late copy, a zombie member's batch cut by other
     * settings) share the id and the server never runs them at the same time.
     */
    private String queryId(InFlight f) {
        return IdempotentInsert.slotQueryId(config.table(), f.partition.topic(), f.partition.partition(), f.from);
    }

    private static String source(TopicPartition tp, long offset) {
        return tp.topic() + "/" + tp.partition() + "/" + offset;
    }

    @Override
    public boolean skipsLanded() {
        return guarantee != Guarantee.AT_LEAST_ONCE;
    }

    /** Asks every replica of the partition's shard that answers (a row may not have reached every replica yet). */
    @Override
    public Set<Long> landed(TopicPartition tp, long from, long toInclusive) {
        if (replicated != null) {
            // a part a 319 left behind unregistered is visible but goes away: only registered parts count
            return replicated.registeredOffsets(shards.of(tp), tp.partition(), from, toInclusive);
        }
        Set<String> lines = shards.of(tp).queryAllReplicas("SELECT " + ClickHouseTarget.OFFSET_COLUMN + " FROM " + config.table() + " WHERE "
                + ClickHouseTarget.PARTITION_COLUMN + " = " + tp.partition() + " AND " + ClickHouseTarget.OFFSET_COLUMN
                + " BETWEEN " + from + " AND " + toInclusive + " FORMAT TabSeparated");
        Set<Long> out = new HashSet<>();
        for (String line : lines) {
            out.add(Long.parseLong(line.strip()));
        }
        return out;
    }

    /** A batch's identity as the query id and the dedup token see it: the source's partition and offset range. */
    private record InFlight(TopicPartition partition, long from, long to) {
    }

    @Override
    public Guarantee guarantee() {
        return guarantee;
    }

    @Override
    public Map<String, Number> metrics() {
        return metrics.snapshot();
    }

    @Override
    public String lastFailure() {
        return metrics.lastFailure();
    }

    @Override
    public int shards() {
        return shardCount;
    }

    @Override
    public int shardOf(TopicPartition partition) {
        return shards.indexOf(partition);
    }

    @Override
    public RowBatch<Long> newBatch(int rowsHint, int bytesHint) {
        return new RowBatch<>(rowsHint, bytesHint);
    }

    @Override
    public int bytes(RowBatch<Long> batch) {
        return batch.bytes();
    }

    @Override
    public int rows(RowBatch<Long> batch) {
        return batch.rows();
    }

    /** Encodes the record into the batch with its partition and offset; a record that is not a row is dead-lettered. */
    @Override
    public boolean add(RowBatch<Long> batch, ConsumerRecord r) {
        metrics.accepted(1);
        try {
            byte[] row = inserter.format().encode(r.value());
            inserter.format().append(batch, row, r.partition(), r.offset(), r.offset());
        } catch (IllegalArgumentException e) {
            ctx.clickHouseDeadLetters().write(List.of(new DeadLetters.Letter(r.value(), e.getMessage(), source(r.topicPartition(), r.offset()))));
            metrics.deadLettered(1);
        }
        return true;
    }

    @Override
    public void skipped(ConsumerRecord r) {
        metrics.accepted(1);
        metrics.duplicatesSkipped(1);
    }

    @Override
    public void giveUpAfter(long timeoutMs) {
        SinkContext c = ctx;
        if (c != null) {
            c.giveUpAfter(timeoutMs);
        }
    }

    @Override
    public void close() {
        if (shards != null) {
            shards.close();
        }
        if (ctx != null) {
            ctx.close();
        }
    }
}
