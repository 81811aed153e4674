package io.sluice.ingest.internal;

import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.core.TopicPartition;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.IngestException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Where the offset-range strategy's batches go: one server ({@code clickhouse.url}), or the shards of a ClickHouse
 * cluster ({@code clickhouse.shards}), each written directly into its local table through its replicas.
 *
 * <p>Rows are routed per partition ({@link IngestConfig.ShardBy}): an offset-range batch lands whole on one shard,
 * and a shard's outage holds back only the partitions routed to it. On a {@code Replicated*MergeTree} with offset
 * columns every statement of a shard goes to its writer replica and is fenced there ({@link ShardWriter}); otherwise
 * a replica that is down or read-only is skipped for the next one ({@link ClickHouseHttp}).
 */
final class Shards implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Shards.class);

    /** One shard: inserts go through {@code http} (failing over between replicas); reads ask every replica. */
    record Shard(int number, ClickHouseHttp http, List<ClickHouseHttp> replicas, BatchInserter inserter) {

        /** The union of a query's lines over every replica that answers; throws only when none answers. */
        Set<String> queryAllReplicas(String sql) {
            Set<String> out = new HashSet<>();
            IngestException last = null;
            int answered = 0;
            for (ClickHouseHttp replica : replicas) {
                try {
                    out.addAll(ClickHouseTarget.lines(replica.query(sql)));
                    answered++;
                } catch (IngestException e) {
                    last = e;
                }
            }
            if (answered == 0) {
                throw last;
            }
            return out;
        }
    }

    private final IngestConfig config;
    private final List<Shard> shards;
    /** the clients opened here (a cluster's replicas and failover clients), not the context's own */
    private final List<ClickHouseHttp> owned;

    private Shards(IngestConfig config, List<Shard> shards, List<ClickHouseHttp> owned) {
        this.config = config;
        this.shards = shards;
        this.owned = owned;
    }

    /** Stops the HTTP clients this opened for a cluster (a single server's client belongs to the context). */
    @Override
    public void close() {
        owned.forEach(ClickHouseHttp::close);
    }

    /**
     * Opens the shards of {@code config}. A cluster target runs {@code table.ddl} on every replica (use
     * {@code {shard}}/{@code {replica}} macros in a {@code Replicated*MergeTree} path) and checks that each replica
     * has the table with the same columns as the first; a replica that cannot be reached at start is logged and
     * skipped until it answers, but every shard needs one replica that answers.
     */
    static Shards open(SinkContext ctx, BatchInserter single) {
        IngestConfig config = ctx.config;
        if (config.shards().isEmpty()) {
            return new Shards(config, List.of(new Shard(1, ctx.http, List.of(ctx.http), single)), List.of());
        }
        RowFormat format = single.format();
        DeadLetters deadLetters = ctx.clickHouseDeadLetters();
        Duration timeout = Duration.ofMillis(config.insertTimeoutMs());
        Map<String, String> expected = ClickHouseTarget.columnsOf(ctx.http, config.database(), config.tableName());
        List<Shard> out = new ArrayList<>();
        List<ClickHouseHttp> owned = new ArrayList<>();
        try {
            openShards(ctx, config, format, deadLetters, timeout, expected, out, owned);
        } catch (RuntimeException e) {
            owned.forEach(ClickHouseHttp::close);
            throw e;
        }
        LOG.info("ingest {}: {} shards {} by {}, local table {}", config.name(), out.size(), config.shards(),
                config.shardBy().name().toLowerCase(java.util.Locale.ROOT), config.table());
        return new Shards(config, List.copyOf(out), List.copyOf(owned));
    }

    private static void openShards(SinkContext ctx, IngestConfig config, RowFormat format, DeadLetters deadLetters,
                                   Duration timeout, Map<String, String> expected, List<Shard> out, List<ClickHouseHttp> owned) {
        for (int s = 0; s < config.shards().size(); s++) {
            List<String> urls = config.shards().get(s);
            List<ClickHouseHttp> replicas = new ArrayList<>();
            int answered = 0;
            for (String url : urls) {
                ClickHouseHttp replica = new ClickHouseHttp(url, config.user(), config.password(), timeout, config.name() + "-replica");
                owned.add(replica);
                replicas.add(replica);
                try {
                    if (config.tableDdl() != null && !config.tableDdl().isBlank()) {
                        replica.query("CREATE DATABASE IF NOT EXISTS " + config.database());
                        replica.query(config.tableDdl());
                    }
                    Map<String, String> columns = ClickHouseTarget.columnsOf(replica, config.database(), config.tableName());
                    if (!columns.equals(expected)) {
                        throw InvalidConfigException.of("clickhouse.shards", url, "has table " + config.table() + " with columns "
                                + columns + ", unlike " + ctx.http.url() + " " + expected);
                    }
                    answered++;
                } catch (IngestException e) {
                    LOG.warn("ingest {}: replica {} of shard {} does not answer at start; skipped until it does: {}",
                            config.name(), url, s + 1, e.getMessage());
                }
            }
            if (answered == 0) {
                throw new IngestException("no replica of shard " + (s + 1) + " " + urls + " answers", -1, false, false, null);
            }
            ClickHouseHttp failover = new ClickHouseHttp(urls, config.user(), config.password(), timeout, config.name() + "-shard");
            owned.add(failover);
            out.add(new Shard(s + 1, failover, List.copyOf(replicas), ctx.inserter(failover, format, Map.of(), deadLetters)));
        }
    }

    int size() {
        return shards.size();
    }

    /** Shard {@code index}, 0-based in configuration order. */
    Shard get(int index) {
        return shards.get(index);
    }

    /** The shard a partition's rows go to; the same for the life of the configuration. */
    Shard of(TopicPartition tp) {
        return shards.get(indexOf(tp));
    }

    /** {@link #of}'s position, 0-based. */
    int indexOf(TopicPartition tp) {
        if (shards.size() == 1) {
            return 0;
        }
        int h = switch (config.shardBy()) {
            case PARTITION -> tp.partition();
            case RANDOM -> mix(tp.topic().hashCode() * 31 + tp.partition());
        };
        return Math.floorMod(h, shards.size());
    }

    private static int mix(int h) {
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        h *= 0xc2b2ae35;
        return h ^ (h >>> 16);
    }
}
