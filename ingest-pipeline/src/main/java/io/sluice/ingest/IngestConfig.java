package io.sluice.ingest;

import io.sluice.core.SluiceException.InvalidConfigException;

import java.net.URI;
import java.util.List;
import java.util.Map;
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
 * @param maxInFlight       INSERTs running at once (coalescing, journal) / async inserts in flight
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
 * @param group             Sluice consumer group of the journal/topic ingestor (default {@code sluice-ingest-<name>})
 * @param deadLetterTable   ClickHouse table for rejected rows of the non-Redis strategies (default {@code <table>_dead_letters})
 * @param source            where the topic is read: a Sluice topic (default) or a Kafka topic ({@link Source})
 * @param kafkaBootstrap    Kafka bootstrap servers {@code host:port[,host:port]} when {@code source=kafka}
 * @param shards            ClickHouse cluster target: per shard, its replicas' HTTP URLs (empty: one server,
 *                          {@code clickhouse.url}); {@code table} is then each shard's local table
 * @param shardBy           how a partition's rows choose their shard ({@link ShardBy})
 */
public record IngestConfig(String name, String topic, String clickHouseUrl, String user, String password, String table,
                           String tableDdl, Strategy strategy, RowEncoder rowEncoder, int batchRows, int batchBytes,
                           long lingerMs, int maxInFlight, int workers, int bufferEvents, long blockMs,
                           long retryInitialMs, long retryMaxMs, long insertTimeoutMs, long closeTimeoutMs,
                           String redisUrl, String redisStream, String redisGroup, long redisMaxPending,
                           long redisClaimIdleMs, int redisMaxDeliveries, String group, String deadLetterTable,
                           Source source, String kafkaBootstrap, List<List<String>> shards, ShardBy shardBy) {

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
        require(batchRows >= 1 && batchRows <= 1_000_000, "batch.rows", batchRows, "must be between 1 and 1000000");
        require(batchBytes >= 1024, "batch.bytes", batchBytes, "must be >= 1024");
        require(lingerMs >= 0 && lingerMs <= 60_000, "linger.ms", lingerMs, "must be between 0 and 60000");
        require(maxInFlight >= 1 && maxInFlight <= 64, "max.in.flight", maxInFlight, "must be between 1 and 64");
        require(workers >= 1 && workers <= 64, "workers", workers, "must be between 1 and 64");
        require(bufferEvents >= 1, "buffer.events", bufferEvents, "must be >= 1");
        require(blockMs >= 0, "block.ms", blockMs, "must be >= 0");
        require(retryInitialMs >= 1, "retry.initial.ms", retryInitialMs, "must be >= 1");
        require(retryMaxMs >= retryInitialMs, "retry.max.ms", retryMaxMs, "must be >= retry.initial.ms (" + retryInitialMs + ")");
        require(insertTimeoutMs >= 100, "insert.timeout.ms", insertTimeoutMs, "must be >= 100");
        require(closeTimeoutMs >= 0, "close.timeout.ms", closeTimeoutMs, "must be >= 0");
        if (strategy.usesRedis()) {
            require(redisUrl != null && redisUrl.startsWith("redis"), "redis.url", redisUrl,
                    "is required for strategy " + strategy.configName() + " (redis://host:port)");
        }
        require(redisStream != null && !redisStream.isBlank(), "redis.stream", redisStream, "must not be blank");
        require(redisGroup != null && !redisGroup.isBlank(), "redis.group", redisGroup, "must not be blank");
        require(redisMaxPending >= 1, "redis.max.pending", redisMaxPending, "must be >= 1");
        require(redisClaimIdleMs >= 100, "redis.claim.idle.ms", redisClaimIdleMs, "must be >= 100");
        require(redisMaxDeliveries >= 1, "redis.max.deliveries", redisMaxDeliveries, "must be >= 1");
        require(group != null && !group.isBlank(), "group", group, "must not be blank");
        require(deadLetterTable != null && deadLetterTable.contains("."), "dead.letter.table", deadLetterTable, "must be db.table");
        Objects.requireNonNull(source, "source");
        if (source == Source.KAFKA) {
            require(kafkaBootstrap != null && kafkaBootstrap.matches("[^,\\s]+:\\d+(,[^,\\s]+:\\d+)*"), "kafka.bootstrap",
                    kafkaBootstrap, "is required for source kafka (host:port[,host:port...])");
            require(strategy == Strategy.JOURNAL, "strategy", strategy.configName(),
                    "must be journal for source kafka (offset-range batches, Kafka offsets committed over landed ranges)");
        }
        shards = shards == null ? List.of() : List.copyOf(shards.stream().map(List::copyOf).toList());
        for (List<String> replicas : shards) {
            require(!replicas.isEmpty(), "clickhouse.shards", shards, "every shard needs at least one replica URL");
            for (String r : replicas) {
                require(r.startsWith("http://") || r.startsWith("https://"), "clickhouse.shards", r, "must be http(s):// URLs");
            }
        }
        require(shards.isEmpty() || strategy == Strategy.JOURNAL, "clickhouse.shards", shards,
                "are supported by the journal strategy (offset-range batches per shard); for the others insert into a Distributed table");
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
     * How the journal strategy picks a shard for a partition's rows on a cluster target. Rows are routed per
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
                + ", redis.url=" + redact(redisUrl) + ", redis.stream=" + redisStream + ", group=" + group
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
        Builder b = new Builder(name);
        Map<String, java.util.function.Consumer<String>> keys = new java.util.LinkedHashMap<>();
        keys.put("topic", b::topic);
        keys.put("clickhouse.url", b::clickHouseUrl);
        keys.put("clickhouse.user", b::user);
        keys.put("clickhouse.password", b::password);
        keys.put("clickhouse.user.env", v -> b.user(envValue(env, p + "clickhouse.user.env", v)));
        keys.put("clickhouse.password.env", v -> b.password(envValue(env, p + "clickhouse.password.env", v)));
        keys.put("table", b::table);
        keys.put("table.ddl", b::tableDdl);
        keys.put("strategy", v -> b.strategy(Strategy.parse(p + "strategy", v)));
        keys.put("row.encoder", v -> b.rowEncoder(newEncoder(p + "row.encoder", v)));
        keys.put("batch.rows", v -> b.batchRows(intValue(p + "batch.rows", v)));
        keys.put("batch.bytes", v -> b.batchBytes(intValue(p + "batch.bytes", v)));
        keys.put("linger.ms", v -> b.lingerMs(longValue(p + "linger.ms", v)));
        keys.put("max.in.flight", v -> b.maxInFlight(intValue(p + "max.in.flight", v)));
        keys.put("workers", v -> b.workers(intValue(p + "workers", v)));
        keys.put("buffer.events", v -> b.bufferEvents(intValue(p + "buffer.events", v)));
        keys.put("block.ms", v -> b.blockMs(longValue(p + "block.ms", v)));
        keys.put("retry.initial.ms", v -> b.retryInitialMs(longValue(p + "retry.initial.ms", v)));
        keys.put("retry.max.ms", v -> b.retryMaxMs(longValue(p + "retry.max.ms", v)));
        keys.put("insert.timeout.ms", v -> b.insertTimeoutMs(longValue(p + "insert.timeout.ms", v)));
        keys.put("close.timeout.ms", v -> b.closeTimeoutMs(longValue(p + "close.timeout.ms", v)));
        keys.put("redis.url", b::redisUrl);
        keys.put("redis.stream", b::redisStream);
        keys.put("redis.group", b::redisGroup);
        keys.put("redis.max.pending", v -> b.redisMaxPending(longValue(p + "redis.max.pending", v)));
        keys.put("redis.claim.idle.ms", v -> b.redisClaimIdleMs(longValue(p + "redis.claim.idle.ms", v)));
        keys.put("redis.max.deliveries", v -> b.redisMaxDeliveries(intValue(p + "redis.max.deliveries", v)));
        keys.put("group", b::group);
        keys.put("dead.letter.table", b::deadLetterTable);
        keys.put("source", v -> b.source(Source.parse(p + "source", v)));
        keys.put("kafka.bootstrap", b::kafkaBootstrap);
        keys.put("clickhouse.shards", v -> b.shards(parseShards(p + "clickhouse.shards", v)));
        keys.put("clickhouse.shard.by", v -> b.shardBy(ShardBy.parse(p + "clickhouse.shard.by", v)));
        for (String key : props.stringPropertyNames()) {
            if (!key.startsWith(p)) {
                continue;
            }
            String suffix = key.substring(p.length());
            java.util.function.Consumer<String> setter = keys.get(suffix);
            if (setter == null) {
                throw InvalidConfigException.of(key, "'" + props.getProperty(key) + "'", "is not a known ingest setting (known: " + keys.keySet() + ")");
            }
            setter.accept(props.getProperty(key).trim());
        }
        return b.build();
    }

    private static String envValue(Function<String, String> env, String setting, String var) {
        String v = env.apply(var);
        if (v == null) {
            throw InvalidConfigException.of(setting, var, "names an environment variable that is not set");
        }
        return v;
    }

    private static int intValue(String setting, String v) {
        try {
            return Integer.parseInt(v.replace("_", ""));
        } catch (NumberFormatException e) {
            throw InvalidConfigException.of(setting, "'" + v + "'", "must be an integer");
        }
    }

    private static long longValue(String setting, String v) {
        try {
            return Long.parseLong(v.replace("_", ""));
        } catch (NumberFormatException e) {
            throw InvalidConfigException.of(setting, "'" + v + "'", "must be an integer");
        }
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
        private String user = "default";
        private String password = "";
        private String table;
        private String tableDdl;
        private Strategy strategy = Strategy.COALESCING;
        private RowEncoder rowEncoder;
        private int batchRows = 10_000;
        private int batchBytes = 16 << 20;
        private long lingerMs = 50;
        private int maxInFlight = 2;
        private int workers = 2;
        private int bufferEvents = 200_000;
        private long blockMs = 10_000;
        private long retryInitialMs = 50;
        private long retryMaxMs = 5_000;
        private long insertTimeoutMs = 30_000;
        private long closeTimeoutMs = 30_000;
        private String redisUrl;
        private String redisStream;
        private String redisGroup = "sluice-ingest";
        private long redisMaxPending = 1_000_000;
        private long redisClaimIdleMs = 60_000;
        private int redisMaxDeliveries = 5;
        private String group;
        private String deadLetterTable;
        private Source source = Source.SLUICE;
        private String kafkaBootstrap;
        private List<List<String>> shards = List.of();
        private ShardBy shardBy = ShardBy.PARTITION;

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

        public IngestConfig build() {
            String t = table == null ? "" : table;
            String url = clickHouseUrl == null && shards != null && !shards.isEmpty() && !shards.get(0).isEmpty()
                    ? shards.get(0).get(0) : clickHouseUrl;
            return new IngestConfig(name, topic, url, user, password, table, tableDdl, strategy, rowEncoder,
                    batchRows, batchBytes, lingerMs, maxInFlight, workers, bufferEvents, blockMs, retryInitialMs,
                    retryMaxMs, insertTimeoutMs, closeTimeoutMs, redisUrl,
                    redisStream != null ? redisStream : "sluice:" + t, redisGroup, redisMaxPending, redisClaimIdleMs,
                    redisMaxDeliveries, group != null ? group : "sluice-ingest-" + name,
                    deadLetterTable != null ? deadLetterTable : (t.isEmpty() ? "x.dead_letters" : t + "_dead_letters"),
                    source, kafkaBootstrap, shards, shardBy);
        }
    }
}
