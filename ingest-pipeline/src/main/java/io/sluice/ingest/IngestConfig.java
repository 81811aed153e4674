package io.sluice.ingest;

import io.sluice.core.SluiceException.InvalidConfigException;

import java.net.URI;
import java.util.List;
import java.util.Map;
import io.sluice.core.config.ConfigDef;
import io.sluice.core.config.ConfigDef.Importance;
import io.sluice.core.config.ConfigDef.Type;
import io.sluice.core.config.Validator;
import java.util.Objects;
import java.util.Properties;
import java.util.function.Function;

/**
 * One ingest pipeline: which topic, which ClickHouse table, which strategy and its bounds. Validated once when
 * built; every message names the setting (as spelled in a properties file) and the value.
 *
 * @param name              pipeline name (the {@code <name>} in {@code ingest.<name>.*}); used in thread names, metrics
 * @param topic             Sluice topic to ingest from (needed by {@link IngestPipeline}, not by a bare {@link EventSink})
 * @param clickHouseUrl     ClickHouse HTTP interface, e.g. {@code http://127.0.0.1:8123}
 * @param user              ClickHouse user
 * @param password          ClickHouse password (never logged; in a file give {@code clickhouse.password.env})
 * @param table             target table, fully qualified {@code db.table}
 * @param tableDdl          optional CREATE TABLE statement run (IF NOT EXISTS is up to the DDL) before validation
 * @param strategy          how rows travel
 * @param rowEncoder        null for JSON passthrough (JSONEachRow); otherwise typed RowBinary rows
 * @param batchRows         most rows per INSERT (1 to 1,000,000: ClickHouse writes up to 1,048,576 rows as one block)
 * @param batchBytes        most payload bytes per INSERT
 * @param lingerMs          longest a non-full batch waits for more rows
 * @param maxInFlight       INSERTs running at once (coalescing, offset-range) / async inserts in flight
 * @param workers           drainers in the Redis consumer group (worker-pool)
 * @param bufferEvents      events accepted but not yet in ClickHouse (or Redis) before writers are back-pressured
 * @param blockMs           how long write() waits for room in a full buffer before BackPressureException
 * @param retryInitialMs    first retry delay after a transient failure (doubles up to retryMaxMs, forever until close)
 * @param retryMaxMs        longest retry delay
 * @param insertTimeoutMs   HTTP request timeout for one INSERT
 * @param closeTimeoutMs    how long close() keeps trying to land what was accepted before failing the rest
 * @param redisUrl          Redis for the stream strategies, e.g. {@code redis://127.0.0.1:6379}
 * @param redisStream       stream key (default {@code sluice:<table>})
 * @param redisGroup        stream consumer group
 * @param redisMaxPending   stream entries not yet in ClickHouse before XADD is back-pressured
 * @param redisClaimIdleMs  entries pending this long at a silent worker are taken over (XAUTOCLAIM)
 * @param redisMaxDeliveries an entry delivered this many times without being acknowledged is dead-lettered
 * @param group             Sluice consumer group of the topic ingestor (default {@code sluice-ingest-<name>})
 * @param deadLetterTable   ClickHouse table for rejected rows of the non-Redis strategies (default {@code <table>_dead_letters})
 * @param source            where the topic is read: a Sluice topic (default) or a Kafka topic ({@link Source})
 * @param kafkaBootstrap    Kafka bootstrap servers {@code host:port[,host:port]} when {@code source=kafka}
 * @param shards            ClickHouse cluster target: per shard, its replicas' HTTP URLs (empty: one server,
 *                          {@code clickhouse.url}); {@code table} is then each shard's local table
 * @param shardBy           how a partition's rows choose their shard ({@link ShardBy})
 * @param redisCluster      true: {@code redisUrl} lists seed nodes of a Redis Cluster ({@code redis://h1:p1,h2:p2}),
 *                          reached with Lettuce's cluster client; the stream key must carry a hash tag
 * @param redisClusterRefreshMs how often the cluster client re-reads the topology (it also does on MOVED/ASK
 *                          redirects and persistent reconnects)
 * @param zooKeeperSessionTimeoutMs with {@code clickhouse.shards} and a {@code Replicated*MergeTree}: the replicas'
 *                          ZooKeeper session timeout ({@code <zookeeper><session_timeout_ms>} of their server
 *                          configuration), from which the shard's writer fence derives its waits (ShardWriter)
 */
public record IngestConfig(String name, String topic, String clickHouseUrl, String user, String password, String table,
                           String tableDdl, Strategy strategy, RowEncoder rowEncoder, int batchRows, int batchBytes,
                           long lingerMs, int maxInFlight, int workers, int bufferEvents, long blockMs,
                           long retryInitialMs, long retryMaxMs, long insertTimeoutMs, long closeTimeoutMs,
                           String redisUrl, String redisStream, String redisGroup, long redisMaxPending,
                           long redisClaimIdleMs, int redisMaxDeliveries, String group, String deadLetterTable,
                           Source source, String kafkaBootstrap, List<List<String>> shards, ShardBy shardBy,
                           boolean redisCluster, long redisClusterRefreshMs, long zooKeeperSessionTimeoutMs) {

    public static final String TOPIC = "topic";
    public static final String CLICKHOUSE_URL = "clickhouse.url";
    public static final String CLICKHOUSE_USER = "clickhouse.user";
    public static final String CLICKHOUSE_PASSWORD = "clickhouse.password";
    public static final String CLICKHOUSE_USER_ENV = "clickhouse.user.env";
    public static final String CLICKHOUSE_PASSWORD_ENV = "clickhouse.password.env";
    public static final String TABLE = "table";
    public static final String TABLE_DDL = "table.ddl";
    public static final String STRATEGY = "strategy";
    public static final String ROW_ENCODER = "row.encoder";
    public static final String BATCH_ROWS = "batch.rows";
    public static final String BATCH_BYTES = "batch.bytes";
    public static final String LINGER_MS = "linger.ms";
    public static final String MAX_IN_FLIGHT = "max.in.flight";
    public static final String WORKERS = "workers";
    public static final String BUFFER_EVENTS = "buffer.events";
    public static final String BLOCK_MS = "block.ms";
    public static final String RETRY_INITIAL_MS = "retry.initial.ms";
    public static final String RETRY_MAX_MS = "retry.max.ms";
    public static final String INSERT_TIMEOUT_MS = "insert.timeout.ms";
    public static final String CLOSE_TIMEOUT_MS = "close.timeout.ms";
    public static final String REDIS_URL = "redis.url";
    public static final String REDIS_STREAM = "redis.stream";
    public static final String REDIS_GROUP = "redis.group";
    public static final String REDIS_MAX_PENDING = "redis.max.pending";
    public static final String REDIS_CLAIM_IDLE_MS = "redis.claim.idle.ms";
    public static final String REDIS_MAX_DELIVERIES = "redis.max.deliveries";
    public static final String REDIS_CLUSTER = "redis.cluster";
    public static final String REDIS_CLUSTER_REFRESH_MS = "redis.cluster.refresh.ms";
    public static final String CLICKHOUSE_ZOOKEEPER_SESSION_TIMEOUT_MS = "clickhouse.zookeeper.session.timeout.ms";
    public static final String GROUP = "group";
    public static final String DEAD_LETTER_TABLE = "dead.letter.table";
    public static final String SOURCE = "source";
    public static final String KAFKA_BOOTSTRAP = "kafka.bootstrap";
    public static final String CLICKHOUSE_SHARDS = "clickhouse.shards";
    public static final String CLICKHOUSE_SHARD_BY = "clickhouse.shard.by";

    /**
     * One pipeline's settings as written after {@code ingest.<name>.} in the broker's properties file (or with
     * {@code sluice ingest --set}); the builder's defaults come from here.
     */
    public static final ConfigDef DEFINITION = new ConfigDef()
            .define(TOPIC, Type.STRING, null, Importance.HIGH, "Sluice topic to ingest from (required by a pipeline)")
            .define(CLICKHOUSE_URL, Type.STRING, null, Importance.HIGH,
                    "ClickHouse HTTP interface, e.g. `http://127.0.0.1:8123` (required)")
            .define(CLICKHOUSE_USER, Type.STRING, "default", Importance.MEDIUM, "ClickHouse user")
            .define(CLICKHOUSE_PASSWORD, Type.PASSWORD, "", Importance.MEDIUM,
                    "ClickHouse password (never logged; prefer clickhouse.password.env)")
            .define(CLICKHOUSE_USER_ENV, Type.STRING, null, Importance.LOW, "environment variable holding the ClickHouse user")
            .define(CLICKHOUSE_PASSWORD_ENV, Type.STRING, null, Importance.MEDIUM,
                    "environment variable holding the ClickHouse password: secrets stay out of config files")
            .define(TABLE, Type.STRING, ConfigDef.NO_DEFAULT, Importance.HIGH, "target table, fully qualified `db.table` (required)")
            .define(TABLE_DDL, Type.STRING, null, Importance.LOW, "CREATE TABLE statement run before the table is validated")
            .define(STRATEGY, Type.STRING, "coalescing", strategyValidator(), Importance.HIGH,
                    "how rows travel (docs/ingest.md); `journal` is accepted as the deprecated name of `offset-range`")
            .define(ROW_ENCODER, Type.STRING, null, Importance.LOW,
                    "RowEncoder class (public no-argument constructor) for typed RowBinary rows; none: JSON passthrough (JSONEachRow)")
            .define(BATCH_ROWS, Type.INT, 10_000, Validator.between(1, 1_000_000), Importance.MEDIUM,
                    "most rows per INSERT (ClickHouse writes up to 1,048,576 rows as one block)")
            .define(BATCH_BYTES, Type.INT, 16 << 20, Validator.atLeast(1024), Importance.MEDIUM, "most payload bytes per INSERT")
            .define(LINGER_MS, Type.LONG, 50L, Validator.between(0, 60_000), Importance.MEDIUM,
                    "longest a non-full batch waits for more rows")
            .define(MAX_IN_FLIGHT, Type.INT, 2, Validator.between(1, 64), Importance.MEDIUM,
                    "INSERTs running at once (coalescing, offset-range) / async inserts in flight")
            .define(WORKERS, Type.INT, 2, Validator.between(1, 64), Importance.MEDIUM, "drainers in the Redis consumer group (worker-pool)")
            .define(BUFFER_EVENTS, Type.INT, 200_000, Validator.atLeast(1), Importance.MEDIUM,
                    "events accepted but not yet in ClickHouse (or Redis) before writers are back-pressured")
            .define(BLOCK_MS, Type.LONG, 10_000L, Validator.atLeast(0), Importance.LOW,
                    "how long a write waits for room in a full buffer before BackPressureException")
            .define(RETRY_INITIAL_MS, Type.LONG, 50L, Validator.atLeast(1), Importance.LOW,
                    "first retry delay after a transient failure (doubles up to retry.max.ms, forever until close)")
            .define(RETRY_MAX_MS, Type.LONG, 5_000L, Validator.atLeast(1), Importance.LOW, "longest retry delay (≥ retry.initial.ms)")
            .define(INSERT_TIMEOUT_MS, Type.LONG, 30_000L, Validator.atLeast(100), Importance.LOW, "HTTP request timeout of one INSERT")
            .define(CLOSE_TIMEOUT_MS, Type.LONG, 30_000L, Validator.atLeast(0), Importance.LOW,
                    "how long close keeps trying to land what was accepted before failing the rest")
            .define(REDIS_URL, Type.STRING, null, Importance.HIGH, "Redis for redis-stream and worker-pool, e.g. `redis://127.0.0.1:6379`")
            .define(REDIS_STREAM, Type.STRING, new ConfigDef.Computed("`sluice:<table>` (`sluice:{<table>}` with `redis.cluster`)", () -> null),
                    Importance.LOW, "stream key; with `redis.cluster` it must contain a hash tag `{...}` (its dead-letter stream shares the slot)")
            .define(REDIS_GROUP, Type.STRING, "sluice-ingest", Validator.nonBlank(), Importance.LOW, "stream consumer group")
            .define(REDIS_MAX_PENDING, Type.LONG, 1_000_000L, Validator.atLeast(1), Importance.MEDIUM,
                    "stream entries not yet in ClickHouse before XADD is back-pressured")
            .define(REDIS_CLAIM_IDLE_MS, Type.LONG, 60_000L, Validator.atLeast(100), Importance.LOW,
                    "entries pending this long at a silent worker are taken over (XAUTOCLAIM)")
            .define(REDIS_MAX_DELIVERIES, Type.INT, 5, Validator.atLeast(1), Importance.LOW,
                    "an entry delivered this many times without being acknowledged is dead-lettered")
            .define(REDIS_CLUSTER, Type.BOOLEAN, false, Importance.MEDIUM,
                    "`redis.url` names seed nodes of a Redis Cluster (`redis://host1:port1,host2:port2`): Lettuce's cluster client follows MOVED/ASK, failovers and resharding")
            .define(REDIS_CLUSTER_REFRESH_MS, Type.LONG, 10_000L, Validator.between(100, 3_600_000), Importance.LOW,
                    "with `redis.cluster`: period of the topology refresh (also refreshed on MOVED/ASK and persistent reconnects)")
            .define(GROUP, Type.STRING, new ConfigDef.Computed("`sluice-ingest-<name>`", () -> null), Importance.LOW,
                    "Sluice consumer group that reads the topic")
            .define(DEAD_LETTER_TABLE, Type.STRING, new ConfigDef.Computed("`<table>_dead_letters`", () -> null), Importance.LOW,
                    "ClickHouse table for rejected rows of the non-Redis strategies (`db.table`)")
            .define(SOURCE, Type.STRING, "sluice", Importance.MEDIUM,
                    "where events come from: `sluice` (the broker's topic) or `kafka` (a Kafka topic, see `kafka.bootstrap`)")
            .define(KAFKA_BOOTSTRAP, Type.STRING, null, Importance.MEDIUM,
                    "Kafka bootstrap servers `HOST:PORT[,HOST:PORT...]` when `source=kafka`")
            .define(CLICKHOUSE_SHARDS, Type.STRING, null, Importance.MEDIUM,
                    "cluster target: shards separated by `;`, each shard's replica URLs by `,` (offset-range strategy; `table` is then each shard's local table)")
            .define(CLICKHOUSE_SHARD_BY, Type.STRING, "partition", Importance.LOW,
                    "how a partition picks its shard: `partition` (partition mod shards) or `random` (a fixed hash of topic and partition)")
            .define(CLICKHOUSE_ZOOKEEPER_SESSION_TIMEOUT_MS, Type.LONG, 30_000L, Validator.between(1_000, 600_000), Importance.LOW,
                    "with `clickhouse.shards` on a `Replicated*MergeTree`: the replicas' ZooKeeper session timeout (their"
                            + " `zookeeper.session_timeout_ms`, ClickHouse's default 30000); a shard's INSERTs move to another"
                            + " replica only after the writer lost its session, and a returning replica waits about twice this"
                            + " before it writes again (docs/ingest.md, cluster targets)");

    private static Validator strategyValidator() {
        return new Validator() {
            @Override
            public void ensureValid(String setting, Object value) {
                Strategy.parse(setting, value.toString());
            }

            @Override
            public String toString() {
                return String.join(", ", Strategy.configNames()) + " (`" + Strategy.DEPRECATED_JOURNAL_NAME + "`: deprecated alias of `offset-range`)";
            }
        };
    }

    public IngestConfig {
        require(name != null && name.matches("[A-Za-z0-9_.-]+"), "name", name, "must be letters, digits, '_', '.', '-'");
        require(clickHouseUrl != null, "clickhouse.url", clickHouseUrl, "is required (or clickhouse.shards)");
        try {
            URI u = URI.create(clickHouseUrl);
            require("http".equals(u.getScheme()) || "https".equals(u.getScheme()), "clickhouse.url", clickHouseUrl,
                    "must be an http(s):// URL of ClickHouse's HTTP interface");
        } catch (IllegalArgumentException e) {
            throw InvalidConfigException.of("clickhouse.url", clickHouseUrl, "must be a URL");
        }
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(password, "password");
        require(table != null && table.matches("[A-Za-z_][A-Za-z0-9_]*\\.[A-Za-z_][A-Za-z0-9_]*"), "table", table,
                "must be fully qualified as db.table (letters, digits, '_')");
        Objects.requireNonNull(strategy, "strategy");
        DEFINITION.check(BATCH_ROWS, BATCH_ROWS, batchRows);
        DEFINITION.check(BATCH_BYTES, BATCH_BYTES, batchBytes);
        DEFINITION.check(LINGER_MS, LINGER_MS, lingerMs);
        DEFINITION.check(MAX_IN_FLIGHT, MAX_IN_FLIGHT, maxInFlight);
        DEFINITION.check(WORKERS, WORKERS, workers);
        DEFINITION.check(BUFFER_EVENTS, BUFFER_EVENTS, bufferEvents);
        DEFINITION.check(BLOCK_MS, BLOCK_MS, blockMs);
        DEFINITION.check(RETRY_INITIAL_MS, RETRY_INITIAL_MS, retryInitialMs);
        require(retryMaxMs >= retryInitialMs, "retry.max.ms", retryMaxMs, "must be >= retry.initial.ms (" + retryInitialMs + ")");
        DEFINITION.check(INSERT_TIMEOUT_MS, INSERT_TIMEOUT_MS, insertTimeoutMs);
        DEFINITION.check(CLOSE_TIMEOUT_MS, CLOSE_TIMEOUT_MS, closeTimeoutMs);
        if (strategy.usesRedis()) {
            require(redisUrl != null && redisUrl.startsWith("redis"), "redis.url", redisUrl,
                    "is required for strategy " + strategy.configName() + " (redis://host:port)");
        }
        require(redisStream != null && !redisStream.isBlank(), "redis.stream", redisStream, "must not be blank");
        if (redisCluster) {
            require(hashTag(redisStream) != null, "redis.stream", redisStream,
                    "must contain a hash tag with redis.cluster, e.g. sluice:{events}: the stream and its dead-letter stream share one slot");
        }
        DEFINITION.check(REDIS_CLUSTER_REFRESH_MS, REDIS_CLUSTER_REFRESH_MS, redisClusterRefreshMs);
        DEFINITION.check(CLICKHOUSE_ZOOKEEPER_SESSION_TIMEOUT_MS, CLICKHOUSE_ZOOKEEPER_SESSION_TIMEOUT_MS, zooKeeperSessionTimeoutMs);
        require(redisGroup != null && !redisGroup.isBlank(), "redis.group", redisGroup, "must not be blank");
        DEFINITION.check(REDIS_MAX_PENDING, REDIS_MAX_PENDING, redisMaxPending);
        DEFINITION.check(REDIS_CLAIM_IDLE_MS, REDIS_CLAIM_IDLE_MS, redisClaimIdleMs);
        DEFINITION.check(REDIS_MAX_DELIVERIES, REDIS_MAX_DELIVERIES, redisMaxDeliveries);
        require(group != null && !group.isBlank(), "group", group, "must not be blank");
        require(deadLetterTable != null && deadLetterTable.contains("."), "dead.letter.table", deadLetterTable, "must be db.table");
        Objects.requireNonNull(source, "source");
        if (source == Source.KAFKA) {
            require(kafkaBootstrap != null && kafkaBootstrap.matches("[^,\\s]+:\\d+(,[^,\\s]+:\\d+)*"), "kafka.bootstrap",
                    kafkaBootstrap, "is required for source kafka (host:port[,host:port...])");
            require(strategy == Strategy.OFFSET_RANGE, "strategy", strategy.configName(),
                    "must be offset-range for source kafka (Kafka offsets committed over landed ranges)");
        }
        shards = shards == null ? List.of() : List.copyOf(shards.stream().map(List::copyOf).toList());
        for (List<String> replicas : shards) {
            require(!replicas.isEmpty(), "clickhouse.shards", shards, "every shard needs at least one replica URL");
            for (String r : replicas) {
                require(r.startsWith("http://") || r.startsWith("https://"), "clickhouse.shards", r, "must be http(s):// URLs");
            }
        }
        require(shards.isEmpty() || strategy == Strategy.OFFSET_RANGE, "clickhouse.shards", shards,
                "are supported by the offset-range strategy (batches per shard); for the others insert into a Distributed table");
        Objects.requireNonNull(shardBy, "shardBy");
    }

    /** Where an ingest pipeline reads its events. */
    public enum Source {
        /** A Sluice topic, through a Sluice consumer group (embedded or remote). */
        SLUICE,
        /** A Kafka topic, through a Kafka consumer group ({@code kafka-clients}); offsets committed to Kafka. */
        KAFKA;

        static Source parse(String setting, String v) {
            return switch (v.trim().toLowerCase(java.util.Locale.ROOT)) {
                case "sluice" -> SLUICE;
                case "kafka" -> KAFKA;
                default -> throw InvalidConfigException.of(setting, "'" + v + "'", "must be sluice or kafka");
            };
        }
    }

    /**
     * How the offset-range strategy picks a shard for a partition's rows on a cluster target. Rows are routed per
     * partition, so each offset-range batch lands whole on one shard and a shard's outage holds back only the
     * partitions routed to it. The producer chose the partition from the event's key, so rows of one key share a
     * shard.
     */
    public enum ShardBy {
        /** shard = partition mod shards: spread evenly when the partition count is a multiple of the shard count. */
        PARTITION,
        /** shard = a fixed hash of (topic, partition) mod shards: a stable random placement. */
        RANDOM;

        static ShardBy parse(String setting, String v) {
            return switch (v.trim().toLowerCase(java.util.Locale.ROOT)) {
                case "partition" -> PARTITION;
                case "random" -> RANDOM;
                default -> throw InvalidConfigException.of(setting, "'" + v + "'", "must be partition or random");
            };
        }
    }

    /**
     * Parses {@code clickhouse.shards}: shards separated by {@code ;}, each shard's replicas by {@code ,}, e.g.
     * {@code http://a1:8123,http://a2:8123;http://b1:8123,http://b2:8123}.
     */
    public static List<List<String>> parseShards(String setting, String v) {
        List<List<String>> out = new java.util.ArrayList<>();
        for (String shard : v.split(";")) {
            List<String> replicas = new java.util.ArrayList<>();
            for (String r : shard.split(",")) {
                if (!r.isBlank()) {
                    replicas.add(r.trim());
                }
            }
            if (replicas.isEmpty()) {
                throw InvalidConfigException.of(setting, "'" + v + "'", "has an empty shard (shards are separated by ';', replicas by ',')");
            }
            out.add(replicas);
        }
        return out;
    }

    /**
     * The hash tag of a Redis key as Redis Cluster reads it: the text between the first {@code {} and the next
     * {@code }}, if non-empty; null when the key has none (then the whole key is hashed).
     */
    public static String hashTag(String key) {
        int open = key.indexOf('{');
        if (open < 0) {
            return null;
        }
        int close = key.indexOf('}', open + 1);
        return close > open + 1 ? key.substring(open + 1, close) : null;
    }

    private static void require(boolean ok, String setting, Object value, String requirement) {
        if (!ok) {
            throw InvalidConfigException.of(setting, value, requirement);
        }
    }

    /** Database part of {@link #table()}. */
    public String database() {
        return table.substring(0, table.indexOf('.'));
    }

    /** Table part of {@link #table()}. */
    public String tableName() {
        return table.substring(table.indexOf('.') + 1);
    }

    /**
     * A URL without its credentials: the user-info part ({@code redis://:secret@host}, {@code http://u:p@host}) and
     * any {@code password=} / {@code user=} query parameter become {@code ***}. Never log a URL without this.
     */
    public static String redact(String url) {
        if (url == null) {
            return null;
        }
        String out = url;
        int scheme = out.indexOf("://");
        int hostStart = scheme < 0 ? 0 : scheme + 3;
        int slash = out.indexOf('/', hostStart);
        int authorityEnd = slash < 0 ? out.length() : slash;
        int q = out.indexOf('?', hostStart);
        if (q >= 0 && q < authorityEnd) {
            authorityEnd = q;
        }
        int at = out.lastIndexOf('@', authorityEnd - 1);
        if (at >= hostStart) {
            out = out.substring(0, hostStart) + "***" + out.substring(at);
        }
        return out.replaceAll("(?i)([?&](password|user|auth|token)=)[^&]*", "$1***");
    }

    @Override
    public String toString() {
        return "IngestConfig[name=" + name + ", topic=" + topic + ", clickhouse.url=" + redact(clickHouseUrl) + ", user=" + user
                + ", password=" + (password.isEmpty() ? "(none)" : "(set)") + ", table=" + table + ", strategy="
                + strategy.configName() + ", rows=" + (rowEncoder == null ? "json" : rowEncoder.getClass().getName())
                + ", batch.rows=" + batchRows + ", batch.bytes=" + batchBytes + ", linger.ms=" + lingerMs
                + ", max.in.flight=" + maxInFlight + ", workers=" + workers + ", buffer.events=" + bufferEvents
                + ", redis.url=" + redact(redisUrl) + (redisCluster ? ", redis.cluster=true" : "") + ", redis.stream=" + redisStream + ", group=" + group
                + (source == Source.KAFKA ? ", source=kafka, kafka.bootstrap=" + kafkaBootstrap : "")
                + (shards.isEmpty() ? "" : ", clickhouse.shards=" + shards.stream().map(r -> r.stream().map(IngestConfig::redact).toList()).toList()
                        + ", clickhouse.shard.by=" + shardBy.name().toLowerCase(java.util.Locale.ROOT))
                + "]";
    }

    public static Builder builder(String name) {
        return new Builder(name);
    }

    /**
     * Reads {@code <prefix>topic}, {@code <prefix>clickhouse.url}, ... from properties, e.g. with prefix
     * {@code ingest.orders.}. Credentials: {@code clickhouse.user} / {@code clickhouse.password} may be given
     * directly, or as the name of an environment variable in {@code clickhouse.user.env} /
     * {@code clickhouse.password.env} (preferred: secrets stay out of config files).
     */
    public static IngestConfig fromProperties(Properties props, String prefix) {
        return fromProperties(props, prefix, System::getenv);
    }

    /** As {@link #fromProperties(Properties, String)} with an explicit environment (for tests). */
    public static IngestConfig fromProperties(Properties props, String prefix, Function<String, String> env) {
        String p = prefix.isEmpty() || prefix.endsWith(".") ? prefix : prefix + ".";
        String name = p.isEmpty() ? "default" : p.substring(0, p.length() - 1);
        int dot = name.lastIndexOf('.');
        name = dot >= 0 ? name.substring(dot + 1) : name;
        Map<String, String> section = new java.util.LinkedHashMap<>();
        for (String key : props.stringPropertyNames()) {
            if (key.startsWith(p)) {
                section.put(key, props.getProperty(key));
            }
        }
        ConfigDef.Values v = DEFINITION.parse(section, p);
        Builder b = new Builder(name)
                .topic(v.getString(TOPIC))
                .clickHouseUrl(v.getString(CLICKHOUSE_URL))
                .user(v.getString(CLICKHOUSE_USER))
                .password(v.getString(CLICKHOUSE_PASSWORD) == null ? "" : v.getString(CLICKHOUSE_PASSWORD))
                .table(v.getString(TABLE))
                .tableDdl(v.getString(TABLE_DDL))
                .strategy(Strategy.parse(p + STRATEGY, v.getString(STRATEGY)))
                .batchRows(v.getInt(BATCH_ROWS))
                .batchBytes(v.getInt(BATCH_BYTES))
                .lingerMs(v.getLong(LINGER_MS))
                .maxInFlight(v.getInt(MAX_IN_FLIGHT))
                .workers(v.getInt(WORKERS))
                .bufferEvents(v.getInt(BUFFER_EVENTS))
                .blockMs(v.getLong(BLOCK_MS))
                .retryInitialMs(v.getLong(RETRY_INITIAL_MS))
                .retryMaxMs(v.getLong(RETRY_MAX_MS))
                .insertTimeoutMs(v.getLong(INSERT_TIMEOUT_MS))
                .closeTimeoutMs(v.getLong(CLOSE_TIMEOUT_MS))
                .redisUrl(v.getString(REDIS_URL))
                .redisStream(v.getString(REDIS_STREAM))
                .redisGroup(v.getString(REDIS_GROUP))
                .redisMaxPending(v.getLong(REDIS_MAX_PENDING))
                .redisClaimIdleMs(v.getLong(REDIS_CLAIM_IDLE_MS))
                .redisMaxDeliveries(v.getInt(REDIS_MAX_DELIVERIES))
                .redisCluster(v.getBoolean(REDIS_CLUSTER))
                .redisClusterRefreshMs(v.getLong(REDIS_CLUSTER_REFRESH_MS))
                .zooKeeperSessionTimeoutMs(v.getLong(CLICKHOUSE_ZOOKEEPER_SESSION_TIMEOUT_MS))
                .group(v.getString(GROUP))
                .deadLetterTable(v.getString(DEAD_LETTER_TABLE));
        if (v.getString(CLICKHOUSE_USER_ENV) != null) {
            b.user(envValue(env, p + CLICKHOUSE_USER_ENV, v.getString(CLICKHOUSE_USER_ENV)));
        }
        if (v.getString(CLICKHOUSE_PASSWORD_ENV) != null) {
            b.password(envValue(env, p + CLICKHOUSE_PASSWORD_ENV, v.getString(CLICKHOUSE_PASSWORD_ENV)));
        }
        if (v.getString(ROW_ENCODER) != null) {
            b.rowEncoder(newEncoder(p + ROW_ENCODER, v.getString(ROW_ENCODER)));
        }
        b.source(Source.parse(p + SOURCE, v.getString(SOURCE)));
        if (v.getString(KAFKA_BOOTSTRAP) != null) {
            b.kafkaBootstrap(v.getString(KAFKA_BOOTSTRAP));
        }
        if (v.getString(CLICKHOUSE_SHARDS) != null) {
            b.shards(parseShards(p + CLICKHOUSE_SHARDS, v.getString(CLICKHOUSE_SHARDS)));
        }
        b.shardBy(ShardBy.parse(p + CLICKHOUSE_SHARD_BY, v.getString(CLICKHOUSE_SHARD_BY)));
        return b.build();
    }

    private static String envValue(Function<String, String> env, String setting, String var) {
        String v = env.apply(var);
        if (v == null) {
            throw InvalidConfigException.of(setting, var, "names an environment variable that is not set");
        }
        return v;
    }

    private static RowEncoder newEncoder(String setting, String className) {
        try {
            return (RowEncoder) Class.forName(className).getConstructor().newInstance();
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw InvalidConfigException.of(setting, className, "must name a RowEncoder class with a public no-argument constructor (" + e + ")");
        }
    }

    public static final class Builder {
        private final String name;
        private String topic;
        private String clickHouseUrl;
        private String user = DEFINITION.defaultString(CLICKHOUSE_USER);
        private String password = DEFINITION.defaultString(CLICKHOUSE_PASSWORD);
        private String table;
        private String tableDdl;
        private Strategy strategy = Strategy.parse(STRATEGY, DEFINITION.defaultString(STRATEGY));
        private RowEncoder rowEncoder;
        private int batchRows = DEFINITION.defaultInt(BATCH_ROWS);
        private int batchBytes = DEFINITION.defaultInt(BATCH_BYTES);
        private long lingerMs = DEFINITION.defaultLong(LINGER_MS);
        private int maxInFlight = DEFINITION.defaultInt(MAX_IN_FLIGHT);
        private int workers = DEFINITION.defaultInt(WORKERS);
        private int bufferEvents = DEFINITION.defaultInt(BUFFER_EVENTS);
        private long blockMs = DEFINITION.defaultLong(BLOCK_MS);
        private long retryInitialMs = DEFINITION.defaultLong(RETRY_INITIAL_MS);
        private long retryMaxMs = DEFINITION.defaultLong(RETRY_MAX_MS);
        private long insertTimeoutMs = DEFINITION.defaultLong(INSERT_TIMEOUT_MS);
        private long closeTimeoutMs = DEFINITION.defaultLong(CLOSE_TIMEOUT_MS);
        private String redisUrl;
        private String redisStream;
        private String redisGroup = DEFINITION.defaultString(REDIS_GROUP);
        private long redisMaxPending = DEFINITION.defaultLong(REDIS_MAX_PENDING);
        private long redisClaimIdleMs = DEFINITION.defaultLong(REDIS_CLAIM_IDLE_MS);
        private int redisMaxDeliveries = DEFINITION.defaultInt(REDIS_MAX_DELIVERIES);
        private String group;
        private String deadLetterTable;
        private Source source = Source.SLUICE;
        private String kafkaBootstrap;
        private List<List<String>> shards = List.of();
        private ShardBy shardBy = ShardBy.PARTITION;
        private boolean redisCluster;
        private long redisClusterRefreshMs = DEFINITION.defaultLong(REDIS_CLUSTER_REFRESH_MS);
        private long zooKeeperSessionTimeoutMs = DEFINITION.defaultLong(CLICKHOUSE_ZOOKEEPER_SESSION_TIMEOUT_MS);

        private Builder(String name) {
            this.name = name;
        }

        public Builder topic(String v) { this.topic = v; return this; }
        public Builder clickHouseUrl(String v) { this.clickHouseUrl = v; return this; }
        public Builder user(String v) { this.user = v; return this; }
        public Builder password(String v) { this.password = v; return this; }
        public Builder table(String v) { this.table = v; return this; }
        public Builder tableDdl(String v) { this.tableDdl = v; return this; }
        public Builder strategy(Strategy v) { this.strategy = v; return this; }
        public Builder rowEncoder(RowEncoder v) { this.rowEncoder = v; return this; }
        public Builder batchRows(int v) { this.batchRows = v; return this; }
        public Builder batchBytes(int v) { this.batchBytes = v; return this; }
        public Builder lingerMs(long v) { this.lingerMs = v; return this; }
        public Builder maxInFlight(int v) { this.maxInFlight = v; return this; }
        public Builder workers(int v) { this.workers = v; return this; }
        public Builder bufferEvents(int v) { this.bufferEvents = v; return this; }
        public Builder blockMs(long v) { this.blockMs = v; return this; }
        public Builder retryInitialMs(long v) { this.retryInitialMs = v; return this; }
        public Builder retryMaxMs(long v) { this.retryMaxMs = v; return this; }
        public Builder insertTimeoutMs(long v) { this.insertTimeoutMs = v; return this; }
        public Builder closeTimeoutMs(long v) { this.closeTimeoutMs = v; return this; }
        public Builder redisUrl(String v) { this.redisUrl = v; return this; }
        public Builder redisStream(String v) { this.redisStream = v; return this; }
        public Builder redisGroup(String v) { this.redisGroup = v; return this; }
        public Builder redisMaxPending(long v) { this.redisMaxPending = v; return this; }
        public Builder redisClaimIdleMs(long v) { this.redisClaimIdleMs = v; return this; }
        public Builder redisMaxDeliveries(int v) { this.redisMaxDeliveries = v; return this; }
        public Builder group(String v) { this.group = v; return this; }
        public Builder deadLetterTable(String v) { this.deadLetterTable = v; return this; }
        public Builder source(Source v) { this.source = v; return this; }
        public Builder kafkaBootstrap(String v) { this.kafkaBootstrap = v; return this; }
        /** Cluster target: per shard, its replicas' URLs; {@code clickhouse.url} defaults to the first replica of shard 1. */
        public Builder shards(List<List<String>> v) { this.shards = v; return this; }
        public Builder shardBy(ShardBy v) { this.shardBy = v; return this; }
        /** {@code redis.url} lists seed nodes of a Redis Cluster; the default stream becomes {@code sluice:{<table>}}. */
        public Builder redisCluster(boolean v) { this.redisCluster = v; return this; }
        public Builder redisClusterRefreshMs(long v) { this.redisClusterRefreshMs = v; return this; }
        public Builder zooKeeperSessionTimeoutMs(long v) { this.zooKeeperSessionTimeoutMs = v; return this; }

        public IngestConfig build() {
            String t = table == null ? "" : table;
            String url = clickHouseUrl == null && shards != null && !shards.isEmpty() && !shards.get(0).isEmpty()
                    ? shards.get(0).get(0) : clickHouseUrl;
            return new IngestConfig(name, topic, url, user, password, table, tableDdl, strategy, rowEncoder,
                    batchRows, batchBytes, lingerMs, maxInFlight, workers, bufferEvents, blockMs, retryInitialMs,
                    retryMaxMs, insertTimeoutMs, closeTimeoutMs, redisUrl,
                    redisStream != null ? redisStream : redisCluster ? "sluice:{" + t + "}" : "sluice:" + t, redisGroup, redisMaxPending, redisClaimIdleMs,
                    redisMaxDeliveries, group != null ? group : "sluice-ingest-" + name,
                    deadLetterTable != null ? deadLetterTable : (t.isEmpty() ? "x.dead_letters" : t + "_dead_letters"),
                    source, kafkaBootstrap, shards, shardBy, redisCluster, redisClusterRefreshMs,
                    zooKeeperSessionTimeoutMs);
        }
    }
}
