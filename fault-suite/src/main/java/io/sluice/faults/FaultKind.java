package io.sluice.faults;

/**
 * The faults the {@link Nemesis} injects. Each is healed before the next one starts (one fault at a time, so every
 * anomaly in the history can be laid against the fault that was active).
 */
public enum FaultKind {
    /** SIGKILL of {@code sluice broker}; restarted when the fault ends. */
    BROKER_KILL,
    /** SIGSTOP of the broker, SIGCONT when the fault ends. */
    BROKER_PAUSE,
    /** SIGKILL of the {@code sluice ingest} process (journal strategy). */
    INGEST_KILL,
    /** SIGSTOP/SIGCONT of the ingest process. */
    INGEST_PAUSE,
    /** SIGKILL of ClickHouse, restarted when the fault ends. */
    CLICKHOUSE_KILL,
    /** SIGSTOP/SIGCONT of ClickHouse: connections open, nothing answered. */
    CLICKHOUSE_PAUSE,
    /** Requests reach ClickHouse late (held in the proxy past {@code insert.timeout.ms}, then executed). */
    CLICKHOUSE_LATE_REQUESTS,
    /** ClickHouse executes INSERTs but their responses never come. */
    CLICKHOUSE_LOST_RESPONSES,
    /** INSERT connections are cut before ClickHouse sees them, and every open connection is cut. */
    CLICKHOUSE_CUT,
    /** SIGKILL of Redis (AOF, fsync every second), restarted when the fault ends. */
    REDIS_KILL,
    /** SIGSTOP/SIGCONT of Redis. */
    REDIS_PAUSE,
    /** Bytes to Redis arrive late through the proxy. */
    REDIS_DELAY,
    /** The Redis proxy forwards nothing either way; healing cuts the stalled connections (responses never come). */
    REDIS_STALL,
    /** Every connection to Redis is cut. */
    REDIS_CUT,
    /** SIGKILL of the ZooKeeper of the replicated ClickHouse ({@code replicated} strategy), restarted when the fault ends. */
    ZOOKEEPER_KILL,
    /** SIGSTOP/SIGCONT of that ZooKeeper: the replicated table's inserts wait, then fail as read-only. */
    ZOOKEEPER_PAUSE,
    /** A group member stops polling past its session timeout, then resumes as if nothing happened (a zombie). */
    MEMBER_PAUSE,
    /**
     * SIGSTOP of a Kafka group member's JVM (a {@code KafkaConsumer}: its heartbeats stop too) past its
     * {@code session.timeout.ms}, SIGCONT when the fault ends: it resumes as a zombie that still believes it owns its
     * partitions.
     */
    KAFKA_MEMBER_PAUSE,
    /** The broker's journal file system fills up (a tmpfs, root only), then space returns. */
    DISK_FULL;

    /** Which component must be present for this fault to make sense. */
    boolean needsRedis() {
        return name().startsWith("REDIS_");
    }

    boolean needsZooKeeper() {
        return name().startsWith("ZOOKEEPER_");
    }

    boolean needsIngestProcess() {
        return name().startsWith("INGEST_");
    }
}
