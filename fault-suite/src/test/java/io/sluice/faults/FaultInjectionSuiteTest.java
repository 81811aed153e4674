package io.sluice.faults;

import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The short version of the fault-injection suite that {@code ./mvnw verify} runs: per seed, every fault kind the
 * machine can inject once in a seeded order, then seeded random faults until 30 s are over, against
 * {@code sluice broker}, {@code sluice ingest}, ClickHouse and Redis while producers and a group work, then
 * the checker's verdict (acknowledged events lost, duplicates where exactly-once is stated, commits going
 * backwards, two members of one generation). Kafka clients work beside Sluice's own, through the broker's Kafka
 * listener: an idempotent {@code KafkaProducer} with Kafka's defaults across the broker's SIGKILLs and SIGSTOPs
 * (every acknowledged record read back once, at its acknowledged offset; none stored twice) and a group of two
 * {@code KafkaConsumer}s in their own JVMs, one SIGSTOPped past its session (no partition owned by two members of
 * one generation). One fixed seed, plus {@code -Dsluice.faults.seed=S} to replay a seed (or
 * {@code -Dsluice.faults.randomSeed=true} for a random one, printed). The long run is {@code scripts/torture.sh}.
 */
@ExtendWith(ServicesExtension.class)
class FaultInjectionSuiteTest {
    private static final long FIXED_SEED = 20261123L;

    /**
     * The fixed seed (every fault kind once, then its random tail), plus {@code -Dsluice.faults.seed=S} when given, or
     * a random seed with {@code -Dsluice.faults.randomSeed=true}. The test command runs the fixed seed only: each seed
     * costs about 3.5 minutes of the 30 the CI run may take, and a random one is the long run's job
     * ({@code scripts/torture.sh}), which prints its seed for replay.
     */
    static LongStream seeds() {
        String given = System.getProperty("sluice.faults.seed");
        if (given != null && !given.isBlank()) {
            return LongStream.of(FIXED_SEED, Long.parseLong(given.trim()));
        }
        if (Boolean.getBoolean("sluice.faults.randomSeed")) {
            return LongStream.of(FIXED_SEED, ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE));
        }
        return LongStream.of(FIXED_SEED);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void noAcknowledgedEventIsLostNoRowDuplicatedWhereExactlyOnceIsStatedNoCommitGoesBackwardsAndNoKafkaRecordIsStoredTwiceUnderSeededFaults(
            long seed, ClickHouseServer clickHouse) throws Exception {
        Path dir = Path.of("target", "torture", "seed-" + seed + "-" + System.currentTimeMillis()).toAbsolutePath();
        TortureConfig config = TortureConfig.of(seed, Duration.ofSeconds(Long.getLong("sluice.faults.seconds", 30)), dir.resolve("run"))
                .withLoad(2, 100, 2)
                .withKafkaMembers(2)
                // usually settled in seconds; after a 319 that left a part unregistered in ZooKeeper, the replicated
                // pipeline waits until that part is gone before sending it again: the settle's ReplicaOperator
                // detaches and attaches the table once the part stayed unregistered for 30 s (18.16 does not drop it)
                .withSettle(Duration.ofSeconds(420));
        List<FaultKind> kinds = new ArrayList<>();
        Report report = Torture.run(config, System.out, kinds);
        System.out.println("[reliability] fault suite, seed " + seed + " (replay: -Dsluice.faults.seed=" + seed + ")\n" + report.format());
        assertThat(report.acked()).as("events acknowledged under faults").isPositive();
        assertThat(kinds).as("fault kinds this machine can inject").contains(FaultKind.CLICKHOUSE_LATE_REQUESTS,
                FaultKind.CLICKHOUSE_LOST_RESPONSES, FaultKind.BROKER_KILL, FaultKind.BROKER_PAUSE, FaultKind.INGEST_PAUSE, FaultKind.MEMBER_PAUSE,
                FaultKind.KAFKA_MEMBER_PAUSE);
        assertThat(report.faults().keySet()).as("every kind injected at least once")
                .containsAll(kinds.stream().map(Enum::name).toList());
        assertThat(report.kafka()).as("Kafka clients in the run").isNotNull();
        assertThat(report.kafka().acked()).as("records the idempotent KafkaProducer had acknowledged under faults").isPositive();
        // two members joining (one or two generations), then at least the paused member's expiry: a third
        assertThat(report.kafka().generations()).as("generations the Kafka group was assigned partitions in").isGreaterThanOrEqualTo(3);
        assertThat(report.violations()).as("violations, seed " + seed + "; history in " + dir).isEmpty();
    }
}
