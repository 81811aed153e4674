package io.sluice.faults;

import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One run's settings, validated once. The seed decides the nemesis' schedule and the workload's choices, so a run
 * is replayed with the same seed and settings (process timing on a loaded machine still varies).
 *
 * @param seed            the run's seed, printed first
 * @param duration        how long the nemesis injects faults (the workload runs as long, then settles)
 * @param strategies      ingest strategies to land into ClickHouse: {@code journal} (a {@code sluice ingest}
 *                        process), {@code coalescing}, {@code worker-pool} and {@code replicated} (sections of the
 *                        broker's config; {@code replicated} is the offset-range strategy into a
 *                        {@code ReplicatedMergeTree} on a second ClickHouse with its own ZooKeeper)
 * @param faults          the fault kinds the nemesis may choose from
 * @param producers       producer clients, each with its own connection
 * @param eventsPerSecond per producer
 * @param members         consumers in the group {@code members}
 * @param kafkaMembers    Kafka clients of the run: 0 leaves them out; otherwise an idempotent {@code KafkaProducer}
 *                        (at {@code eventsPerSecond}) writes the topic {@code kafka-events} through the broker's Kafka
 *                        listener and this many {@code KafkaConsumer}s, each in its own JVM, form the group
 *                        {@code kafka-members} on it (see {@link KafkaWorkload})
 * @param partitions      partitions of the topic {@code events}
 * @param sessionTimeoutMillis the members' session timeout
 * @param insertTimeoutMillis  {@code insert.timeout.ms} of every ingest pipeline
 * @param settle          how long, after the faults, everything acknowledged may take to land
 * @param runDir          history, logs and data of the run
 * @param ingestEnv       extra environment of the {@code sluice ingest} process (a test that breaks a guarantee on
 *                        purpose sets {@code JAVA_TOOL_OPTIONS} here); empty in every real run
 */
public record TortureConfig(long seed, Duration duration, Set<String> strategies, Set<FaultKind> faults, int producers,
                            int eventsPerSecond, int members, int kafkaMembers, int partitions, long sessionTimeoutMillis,
                            long insertTimeoutMillis, Duration settle, Path runDir,
                            Map<String, String> ingestEnv) {
    public static final List<String> STRATEGIES = List.of("journal", "coalescing", "worker-pool", "replicated");

    public TortureConfig {
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException("duration must be positive, got " + duration);
        }
        for (String s : strategies) {
            if (!STRATEGIES.contains(s)) {
                throw new IllegalArgumentException("strategy '" + s + "' is not one of " + STRATEGIES);
            }
        }
        strategies = Set.copyOf(new LinkedHashSet<>(strategies));
        faults = faults.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(faults));
        require(producers >= 1 && producers <= 64, "producers", producers);
        require(eventsPerSecond >= 1 && eventsPerSecond <= 100_000, "eventsPerSecond", eventsPerSecond);
        require(members >= 0 && members <= 16, "members", members);
        require(kafkaMembers >= 0 && kafkaMembers <= 8, "kafkaMembers", kafkaMembers);
        require(partitions >= 1 && partitions <= 64, "partitions", partitions);
        require(sessionTimeoutMillis >= 500, "sessionTimeoutMillis", sessionTimeoutMillis);
        require(insertTimeoutMillis >= 100, "insertTimeoutMillis", insertTimeoutMillis);
        ingestEnv = Map.copyOf(ingestEnv);
    }

    private static void require(boolean ok, String name, long value) {
        if (!ok) {
            throw new IllegalArgumentException(name + " out of range: " + value);
        }
    }

    /** Defaults: every strategy and fault, 2 producers × 200 events/s, 3 members, 2 Kafka members, 4 partitions. */
    public static TortureConfig of(long seed, Duration duration, Path runDir) {
        return new TortureConfig(seed, duration, Set.copyOf(STRATEGIES), EnumSet.allOf(FaultKind.class), 2, 200, 3, 2, 4,
                3_000, 1_000, Duration.ofMinutes(3), runDir, Map.of());
    }

    public TortureConfig withStrategies(Set<String> s) {
        return new TortureConfig(seed, duration, s, faults, producers, eventsPerSecond, members, kafkaMembers, partitions,
                sessionTimeoutMillis, insertTimeoutMillis, settle, runDir, ingestEnv);
    }

    public TortureConfig withFaults(Set<FaultKind> f) {
        return new TortureConfig(seed, duration, strategies, f, producers, eventsPerSecond, members, kafkaMembers, partitions,
                sessionTimeoutMillis, insertTimeoutMillis, settle, runDir, ingestEnv);
    }

    public TortureConfig withSettle(Duration settle) {
        return new TortureConfig(seed, duration, strategies, faults, producers, eventsPerSecond, members, kafkaMembers, partitions,
                sessionTimeoutMillis, insertTimeoutMillis, settle, runDir, ingestEnv);
    }

    public TortureConfig withInsertTimeout(long millis) {
        return new TortureConfig(seed, duration, strategies, faults, producers, eventsPerSecond, members, kafkaMembers, partitions,
                sessionTimeoutMillis, millis, settle, runDir, ingestEnv);
    }

    public TortureConfig withLoad(int producers, int eventsPerSecond, int members) {
        return new TortureConfig(seed, duration, strategies, faults, producers, eventsPerSecond, members, kafkaMembers, partitions,
                sessionTimeoutMillis, insertTimeoutMillis, settle, runDir, ingestEnv);
    }

    /** With {@code n} Kafka group members (0: no Kafka clients in the run). */
    public TortureConfig withKafkaMembers(int n) {
        return new TortureConfig(seed, duration, strategies, faults, producers, eventsPerSecond, members, n, partitions,
                sessionTimeoutMillis, insertTimeoutMillis, settle, runDir, ingestEnv);
    }

    /** With extra environment for the {@code sluice ingest} process (tests that break a guarantee on purpose only). */
    public TortureConfig withIngestEnv(Map<String, String> env) {
        return new TortureConfig(seed, duration, strategies, faults, producers, eventsPerSecond, members, kafkaMembers, partitions,
                sessionTimeoutMillis, insertTimeoutMillis, settle, runDir, env);
    }

    public boolean has(String strategy) {
        return strategies.contains(strategy);
    }
}
