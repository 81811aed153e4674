package io.sluice.redis;

import io.lettuce.core.resource.ClientResources;
import io.sluice.core.SluiceException.InvalidConfigException;

import java.time.Duration;
import java.util.Objects;

/**
 * Everything the Redis Streams transport needs, validated once by {@link Builder#build()} (the message names the
 * setting and the bad value). One config serves both {@link RedisStreamsProducer} and {@link RedisStreamsConsumer}.
 *
 * <h2>Key layout</h2>
 * A topic with {@link #partitions()} = P is P streams, {@code <keyPrefix>{<topic>}:<p>} for p in [0, P), and one
 * dead-letter stream {@code <keyPrefix>{<topic>}:dlq}. The braces are a Redis Cluster hash tag: every stream of a
 * topic, its consumer groups and its dead-letter stream live in one slot, so one {@code XREADGROUP} can read all the
 * partitions of a topic on a cluster too.
 *
 * <h2>Settings</h2>
 * <table>
 * <tr><th>setting</th><th>default</th><th>meaning</th></tr>
 * <tr><td>uri</td><td>redis://127.0.0.1:6379</td><td>the Redis server (Lettuce URI syntax); for a cluster, seed nodes
 *     {@code redis://h1:p1,h2:p2}</td></tr>
 * <tr><td>cluster</td><td>false</td><td>{@code uri} names a Redis Cluster (every key of a topic is on one slot, see
 *     above)</td></tr>
 * <tr><td>clusterRefreshMillis</td><td>10000</td><td>cluster: how often the topology is refreshed (also on redirects and
 *     reconnects)</td></tr>
 * <tr><td>keyPrefix</td><td>sluice:</td><td>prefix of every stream key</td></tr>
 * <tr><td>partitions</td><td>1</td><td>streams per topic (1–1024); producer and consumers must agree</td></tr>
 * <tr><td>lingerMillis</td><td>0</td><td>producer: how long an XADD may wait in the pipeline for more to batch with
 *     (0: flushed at once, the lowest latency)</td></tr>
 * <tr><td>batchSize</td><td>64</td><td>producer: with linger, flush once this many XADDs are waiting</td></tr>
 * <tr><td>maxInFlight</td><td>4096</td><td>producer: XADDs sent but not yet acknowledged by Redis; more sends wait
 *     (back-pressure)</td></tr>
 * <tr><td>maxBlockMillis</td><td>60000</td><td>producer: how long {@code send} waits for an in-flight slot before
 *     failing with {@code BackPressureException} ({@code trySend} never waits)</td></tr>
 * <tr><td>maxEventBytes</td><td>1 MiB</td><td>largest key+value+headers of one event</td></tr>
 * <tr><td>trimMaxLength</td><td>0 (off)</td><td>producer: keep about this many entries per stream</td></tr>
 * <tr><td>trimMaxAge</td><td>null (off)</td><td>producer: drop entries older than this ({@code MINID})</td></tr>
 * <tr><td>trimUnacknowledged</td><td>false</td><td>opt-in: let trimming remove entries a group has not acknowledged
 *     (plain {@code XADD MAXLEN ~}); by default trimming stops at the oldest entry any group still needs</td></tr>
 * <tr><td>trimIntervalMillis</td><td>100</td><td>producer: how often the trimmer runs</td></tr>
 * <tr><td>claimIdleMillis</td><td>30000</td><td>consumer: a pending entry idle this long (its member died or stalled)
 *     is claimed by the next member that polls ({@code XAUTOCLAIM})</td></tr>
 * <tr><td>claimIntervalMillis</td><td>1000</td><td>consumer: how often a member looks for such entries</td></tr>
 * <tr><td>maxDeliveries</td><td>5</td><td>consumer: an entry claimed after this many deliveries goes to the
 *     dead-letter stream instead (0: never)</td></tr>
 * <tr><td>commandTimeoutMillis</td><td>10000</td><td>bound on every Redis reply (a blocking read: its block time plus
 *     this)</td></tr>
 * <tr><td>asyncCommitLingerMillis</td><td>0</td><td>consumer: {@code commitAsync} acknowledgements wait up to this long
 *     to go out as one {@code XACK} (0: each with the next read)</td></tr>
 * <tr><td>clientResources</td><td>null</td><td>share Lettuce's event loops between producers and consumers (the owner
 *     shuts them down); null: each producer/consumer has its own (one connection, so one busy I/O thread)</td></tr>
 * </table>
 */
public final class RedisStreamsConfig {
    private final String uri;
    private final boolean cluster;
    private final long clusterRefreshMillis;
    private final String keyPrefix;
    private final int partitions;
    private final long lingerMillis;
    private final int batchSize;
    private final int maxInFlight;
    private final long maxBlockMillis;
    private final int maxEventBytes;
    private final long trimMaxLength;
    private final Duration trimMaxAge;
    private final boolean trimUnacknowledged;
    private final long trimIntervalMillis;
    private final long claimIdleMillis;
    private final long claimIntervalMillis;
    private final int maxDeliveries;
    private final long commandTimeoutMillis;
    private final long asyncCommitLingerMillis;
    private final ClientResources clientResources;

    private RedisStreamsConfig(Builder b) {
        this.uri = b.uri;
        this.cluster = b.cluster;
        this.clusterRefreshMillis = b.clusterRefreshMillis;
        this.keyPrefix = b.keyPrefix;
        this.partitions = b.partitions;
        this.lingerMillis = b.lingerMillis;
        this.batchSize = b.batchSize;
        this.maxInFlight = b.maxInFlight;
        this.maxBlockMillis = b.maxBlockMillis;
        this.maxEventBytes = b.maxEventBytes;
        this.trimMaxLength = b.trimMaxLength;
        this.trimMaxAge = b.trimMaxAge;
        this.trimUnacknowledged = b.trimUnacknowledged;
        this.trimIntervalMillis = b.trimIntervalMillis;
        this.claimIdleMillis = b.claimIdleMillis;
        this.claimIntervalMillis = b.claimIntervalMillis;
        this.maxDeliveries = b.maxDeliveries;
        this.commandTimeoutMillis = b.commandTimeoutMillis;
        this.asyncCommitLingerMillis = b.asyncCommitLingerMillis;
        this.clientResources = b.clientResources;
    }

    public static Builder builder(String uri) {
        return new Builder().uri(uri);
    }

    public String uri() { return uri; }
    public boolean cluster() { return cluster; }
    public long clusterRefreshMillis() { return clusterRefreshMillis; }
    public String keyPrefix() { return keyPrefix; }
    public int partitions() { return partitions; }
    public long lingerMillis() { return lingerMillis; }
    public int batchSize() { return batchSize; }
    public int maxInFlight() { return maxInFlight; }
    public long maxBlockMillis() { return maxBlockMillis; }
    public int maxEventBytes() { return maxEventBytes; }
    public long trimMaxLength() { return trimMaxLength; }
    public Duration trimMaxAge() { return trimMaxAge; }
    public boolean trimUnacknowledged() { return trimUnacknowledged; }
    public long trimIntervalMillis() { return trimIntervalMillis; }
    public long claimIdleMillis() { return claimIdleMillis; }
    public long claimIntervalMillis() { return claimIntervalMillis; }
    public int maxDeliveries() { return maxDeliveries; }
    public long commandTimeoutMillis() { return commandTimeoutMillis; }
    public long asyncCommitLingerMillis() { return asyncCommitLingerMillis; }
    public ClientResources clientResources() { return clientResources; }

    /** True when the producer trims at all. */
    public boolean trims() {
        return trimMaxLength > 0 || trimMaxAge != null;
    }

    /** The stream holding partition {@code partition} of {@code topic}: {@code <keyPrefix>{<topic>}:<partition>}. */
    public String streamKey(String topic, int partition) {
        return keyPrefix + "{" + topic + "}:" + partition;
    }

    /** The topic's dead-letter stream: {@code <keyPrefix>{<topic>}:dlq}. */
    public String deadLetterKey(String topic) {
        return keyPrefix + "{" + topic + "}:dlq";
    }

    public static final class Builder {
        private String uri = "redis://127.0.0.1:6379";
        private boolean cluster;
        private long clusterRefreshMillis = 10_000;
        private String keyPrefix = "sluice:";
        private int partitions = 1;
        private long lingerMillis = 0;
        private int batchSize = 64;
        private int maxInFlight = 4096;
        private long maxBlockMillis = 60_000;
        private int maxEventBytes = 1 << 20;
        private long trimMaxLength = 0;
        private Duration trimMaxAge;
        private boolean trimUnacknowledged;
        private long trimIntervalMillis = 100;
        private long claimIdleMillis = 30_000;
        private long claimIntervalMillis = 1_000;
        private int maxDeliveries = 5;
        private long commandTimeoutMillis = 10_000;
        private long asyncCommitLingerMillis = 0;
        private ClientResources clientResources;

        public Builder uri(String v) { this.uri = v; return this; }
        /** {@code uri} names a Redis Cluster's seed nodes. */
        public Builder cluster(boolean v) { this.cluster = v; return this; }
        public Builder clusterRefreshMillis(long v) { this.clusterRefreshMillis = v; return this; }
        public Builder keyPrefix(String v) { this.keyPrefix = v; return this; }
        public Builder partitions(int v) { this.partitions = v; return this; }
        public Builder lingerMillis(long v) { this.lingerMillis = v; return this; }
        public Builder batchSize(int v) { this.batchSize = v; return this; }
        public Builder maxInFlight(int v) { this.maxInFlight = v; return this; }
        public Builder maxBlockMillis(long v) { this.maxBlockMillis = v; return this; }
        public Builder maxEventBytes(int v) { this.maxEventBytes = v; return this; }
        /** Keep about {@code v} entries per stream ({@code MAXLEN ~}); 0 turns length trimming off. */
        public Builder trimMaxLength(long v) { this.trimMaxLength = v; return this; }
        /** Drop entries older than {@code v} ({@code MINID ~}); null turns age trimming off. */
        public Builder trimMaxAge(Duration v) { this.trimMaxAge = v; return this; }
        /** Opt in to trimming entries that a consumer group has not acknowledged yet (they are lost to it). */
        public Builder trimUnacknowledged(boolean v) { this.trimUnacknowledged = v; return this; }
        public Builder trimIntervalMillis(long v) { this.trimIntervalMillis = v; return this; }
        public Builder claimIdleMillis(long v) { this.claimIdleMillis = v; return this; }
        public Builder claimIntervalMillis(long v) { this.claimIntervalMillis = v; return this; }
        public Builder maxDeliveries(int v) { this.maxDeliveries = v; return this; }
        public Builder commandTimeoutMillis(long v) { this.commandTimeoutMillis = v; return this; }
        /** How long {@code commitAsync} acknowledgements may wait to travel together (0: with the next read). */
        public Builder asyncCommitLingerMillis(long v) { this.asyncCommitLingerMillis = v; return this; }
        public Builder clientResources(ClientResources v) { this.clientResources = v; return this; }

        public RedisStreamsConfig build() {
            if (uri == null || !(uri.startsWith("redis://") || uri.startsWith("rediss://") || uri.startsWith("redis-socket://"))) {
                throw InvalidConfigException.of("uri", uri, "must be a redis://, rediss:// or redis-socket:// URI");
            }
            if (cluster && uri.startsWith("redis-socket://")) {
                throw InvalidConfigException.of("uri", uri, "must be a redis:// or rediss:// URI for a cluster");
            }
            require("clusterRefreshMillis", clusterRefreshMillis, 1, 3_600_000);
            Objects.requireNonNull(keyPrefix, "keyPrefix");
            if (keyPrefix.contains("{") || keyPrefix.contains("}")) {
                throw InvalidConfigException.of("keyPrefix", keyPrefix, "must not contain braces (the topic is the hash tag)");
            }
            require("partitions", partitions, 1, 1024);
            require("lingerMillis", lingerMillis, 0, 60_000);
            require("batchSize", batchSize, 1, 65_536);
            require("maxInFlight", maxInFlight, 1, 1 << 20);
            require("maxBlockMillis", maxBlockMillis, 0, Long.MAX_VALUE);
            require("maxEventBytes", maxEventBytes, 1, 512 << 20);
            require("trimMaxLength", trimMaxLength, 0, Long.MAX_VALUE);
            if (trimMaxAge != null && (trimMaxAge.isNegative() || trimMaxAge.isZero())) {
                throw InvalidConfigException.of("trimMaxAge", trimMaxAge, "must be positive (or null for no age trimming)");
            }
            require("trimIntervalMillis", trimIntervalMillis, 1, 3_600_000);
            require("claimIdleMillis", claimIdleMillis, 1, Long.MAX_VALUE);
            require("claimIntervalMillis", claimIntervalMillis, 1, Long.MAX_VALUE);
            require("maxDeliveries", maxDeliveries, 0, Integer.MAX_VALUE);
            require("commandTimeoutMillis", commandTimeoutMillis, 1, Long.MAX_VALUE);
            require("asyncCommitLingerMillis", asyncCommitLingerMillis, 0, 60_000);
            return new RedisStreamsConfig(this);
        }

        private static void require(String setting, long value, long min, long max) {
            if (value < min || value > max) {
                throw InvalidConfigException.of(setting, value, "must be between " + min + " and " + max);
            }
        }
    }
}
