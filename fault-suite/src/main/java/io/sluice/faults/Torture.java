package io.sluice.faults;

import io.sluice.testkit.Await;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;

/**
 * One run of the suite: start the cluster, run the workload (and the Kafka clients' {@link KafkaWorkload}) while the
 * nemesis injects faults, heal, stop producing, let everything acknowledged land (bounded by
 * {@link TortureConfig#settle()}), read the Kafka topic back, stop the members, and check. The entry point of {@code scripts/torture.sh}:
 *
 * <pre>
 * Torture --minutes N [--seconds N] [--seed S] [--strategies journal,coalescing,worker-pool] [--faults KIND,...]
 *         [--producers N] [--rate EVENTS_PER_S_PER_PRODUCER] [--members N] [--kafka-members N] [--settle-seconds N]
 *         [--run-dir DIR]
 * </pre>
 * Prints the seed first, then the report; exits 1 when a guarantee is violated. {@code --scenario late-inserts} and
 * {@code --scenario unauthenticated-flood} run issue 11's two reproductions instead (the same as
 * {@code LateInsertTest} and {@code UnauthenticatedMemoryTest}).
 */
public final class Torture {
    private Torture() {
    }

    /** Runs {@code config} and returns the checker's report (also written to {@code report.txt} in the run dir). */
    public static Report run(TortureConfig config, PrintStream out) throws InterruptedException {
        return run(config, out, new ArrayList<>());
    }

    /**
     * For the post-mortem of a broken exactly-once promise: every row of an id stored twice in a table with offset
     * columns, with the part holding it ({@code duplicates-<strategy>.tsv} in the run directory: id, partition,
     * offset, part; the part's name carries its block number, so the order in which the copies landed).
     */
    private static void writeDuplicates(TortureConfig config, Cluster cluster, PrintStream out) {
        for (Cluster.Table t : cluster.tables()) {
            if (!t.exactlyOnce() || !t.name().endsWith(".replicated")) {
                continue;
            }
            try {
                List<String> rows = t.server().queryLines("SELECT id, _sluice_partition, _sluice_offset, _part FROM " + t.name()
                        + " WHERE id IN (SELECT id FROM " + t.name() + " GROUP BY id HAVING count() > 1)"
                        + " ORDER BY _sluice_partition, _sluice_offset, _part");
                if (!rows.isEmpty()) {
                    Path file = config.runDir().resolve("duplicates-" + t.strategy() + ".tsv");
                    Files.write(file, rows, StandardCharsets.UTF_8);
                    out.println("[torture] " + rows.size() + " rows of duplicated ids in " + t.name() + ": " + file);
                }
            } catch (IOException | RuntimeException e) {
                out.println("[torture] could not list the duplicated rows of " + t.name() + ": " + e);
            }
        }
    }

    /** As {@link #run(TortureConfig, PrintStream)}, adding to {@code kinds} the fault kinds the run could inject. */
    public static Report run(TortureConfig config, PrintStream out, List<FaultKind> kinds) throws InterruptedException {
        out.println("[torture] seed " + config.seed() + ", " + config.duration().toSeconds() + " s of faults, strategies "
                + config.strategies() + ", run dir " + config.runDir());
        try (History history = new History(config.runDir().resolve("history.jsonl"));
             Cluster cluster = new Cluster(config);
             KafkaWorkload kafka = config.kafkaMembers() > 0 ? new KafkaWorkload(config, cluster.kafkaBootstrap(), history) : null) {
            if (kafka != null) {
                kafka.startMembers(); // their JVMs start while the broker does
            }
            cluster.start();
            Workload workload = new Workload(config, cluster.bootstrap(), history);
            KafkaWorkload.ReadBack kafkaTopic = null;
            List<String> operatorActions = List.of();
            try (workload; Nemesis nemesis = new Nemesis(config, cluster, workload, kafka, history)) {
                out.println("[torture] fault kinds: " + nemesis.kinds());
                kinds.addAll(nemesis.kinds());
                workload.start();
                if (kafka != null) {
                    kafka.startProducer();
                    boolean formed = kafka.awaitGroupFormed(Duration.ofSeconds(60));
                    out.println("[torture] Kafka group " + (formed ? "formed" : "not formed within 60 s") + "; faults begin");
                }
                nemesis.start();
                nemesis.awaitEnd();
                out.println("[torture] faults over " + nemesis.injected() + "; settling");
                history.append("torture", "heal", "info", n -> cluster.heal().forEach(x -> n.withArray("restarted").add(x)));
                workload.stopProducing();
                if (kafka != null) {
                    kafka.stopProducing();
                }
                // members still append: read the lines flushed whole, not the part of one the writer's buffer spilled
                Checker.Facts facts = Checker.read(history.file(), history.flushLines());
                operatorActions = settle(config, cluster, workload, facts.acked, out);
                if (kafka != null) {
                    kafkaTopic = kafka.readBack(Duration.ofSeconds(60));
                }
                workload.stopConsuming();
                if (kafka != null) {
                    kafka.close(); // the members stop before the history is checked
                }
            }
            history.flush();
            Report report = Checker.check(config.seed(), history.file(), cluster.tables(), config.members(), kafkaTopic);
            writeDuplicates(config, cluster, out);
            String text = report.format() + "processes that exited before they were ready (started again): "
                    + cluster.failedStarts() + "\n"
                    + "operator actions while settling (ReplicaOperator): " + (operatorActions.isEmpty() ? "none" : operatorActions) + "\n";
            out.print(text);
            try {
                Files.writeString(config.runDir().resolve("report.txt"), text, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return report;
        }
    }

    /**
     * Waits until every acknowledged id is in every table and was consumed by a member, no request is held in the
     * ClickHouse proxy, and the tables' row counts are stable across two looks — or until the settle deadline (the
     * checker then reports what is missing). Meanwhile a {@link ReplicaOperator} moves aside a part a replica kept
     * unregistered; returns what it did.
     */
    static List<String> settle(TortureConfig config, Cluster cluster, Workload workload, BitSet acked, PrintStream out) {
        ReplicaOperator operator = new ReplicaOperator();
        long[] lastRows = {-1};
        int[] stable = {0};
        try {
            Await.until("everything acknowledged landed and was consumed", config.settle(), () -> {
                if (cluster.clickHouseProxies().stream().anyMatch(p -> p.delayedPending() > 0)) {
                    return false;
                }
                long rows = 0;
                for (Cluster.Table t : cluster.tables()) {
                    BitSet missing = (BitSet) acked.clone();
                    try {
                        for (String line : t.server().queryLines("SELECT id FROM " + t.name() + " GROUP BY id")) {
                            missing.clear((int) Long.parseLong(line.trim()));
                        }
                        rows += t.server().queryLong("SELECT count() FROM " + t.name());
                    } catch (RuntimeException e) {
                        return false;
                    }
                    if (!missing.isEmpty()) {
                        operator.tend(cluster.tables(), out);
                        return false;
                    }
                }
                if (workload != null && config.members() > 0 && !workload.consumedAll(acked)) {
                    return false;
                }
                stable[0] = rows == lastRows[0] ? stable[0] + 1 : 0;
                lastRows[0] = rows;
                return stable[0] >= 3;
            });
        } catch (AssertionError e) {
            out.println("[torture] not settled within " + config.settle() + ": " + e.getMessage());
        }
        return operator.actions();
    }

    public static void main(String[] args) throws Exception {
        long seed = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
        Duration duration = Duration.ofMinutes(1);
        Set<String> strategies = new LinkedHashSet<>(TortureConfig.STRATEGIES);
        Set<FaultKind> faults = EnumSet.allOf(FaultKind.class);
        Integer producers = null;
        Integer rate = null;
        Integer members = null;
        Integer kafkaMembers = null;
        Path runDir = null;
        Duration settle = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                System.out.println("usage: torture.sh --minutes N [--seconds N] [--seed S] [--strategies "
                        + String.join(",", TortureConfig.STRATEGIES) + "] [--faults " + Arrays.toString(FaultKind.values())
                        + "] [--producers N] [--rate N] [--members N] [--kafka-members N] [--settle-seconds N] [--run-dir DIR]\n       torture.sh --scenario late-inserts|unauthenticated-flood");
                return;
            }
            if (i + 1 >= args.length) {
                System.err.println("torture: missing value for " + a);
                System.exit(2);
            }
            String v = args[++i];
            switch (a) {
                case "--scenario" -> {
                    Path dir = Path.of("target", "torture", v + "-" + System.currentTimeMillis()).toAbsolutePath();
                    switch (v) {
                        case "late-inserts" -> {
                            LateInserts.Result r = LateInserts.run(dir, 20_000);
                            System.out.println("[torture] late inserts (journal strategy): " + r);
                            System.exit(r.lost() == 0 && r.duplicated() == 0 ? 0 : 1);
                        }
                        case "unauthenticated-flood" -> {
                            UnauthenticatedFlood.Result r = UnauthenticatedFlood.run(dir);
                            System.out.println("[torture] unauthenticated flood: " + r);
                            System.exit(r.brokerAlive() && r.growth() < (256L << 20) ? 0 : 1);
                        }
                        default -> {
                            System.err.println("torture: unknown scenario " + v + " (late-inserts, unauthenticated-flood)");
                            System.exit(2);
                        }
                    }
                }
                case "--minutes" -> duration = Duration.ofMinutes(Long.parseLong(v));
                case "--seconds" -> duration = Duration.ofSeconds(Long.parseLong(v));
                case "--seed" -> seed = Long.parseLong(v);
                case "--strategies" -> strategies = Arrays.stream(v.split(",")).map(String::trim).filter(s -> !s.isEmpty())
                        .collect(Collectors.toCollection(LinkedHashSet::new));
                case "--faults" -> faults = Arrays.stream(v.split(",")).map(String::trim).map(FaultKind::valueOf)
                        .collect(Collectors.toCollection(() -> EnumSet.noneOf(FaultKind.class)));
                case "--producers" -> producers = Integer.parseInt(v);
                case "--rate" -> rate = Integer.parseInt(v);
                case "--members" -> members = Integer.parseInt(v);
                case "--kafka-members" -> kafkaMembers = Integer.parseInt(v);
                case "--run-dir" -> runDir = Path.of(v);
                case "--settle-seconds" -> settle = Duration.ofSeconds(Long.parseLong(v));
                default -> {
                    System.err.println("torture: unknown option " + a);
                    System.exit(2);
                }
            }
        }
        if (runDir == null) {
            runDir = Path.of("target", "torture", "run-" + Instant.now().toString().replace(':', '-') + "-" + seed);
        }
        TortureConfig base = TortureConfig.of(seed, duration, runDir.toAbsolutePath()).withStrategies(strategies).withFaults(faults);
        if (settle != null) {
            base = base.withSettle(settle);
        }
        TortureConfig config = base.withLoad(producers == null ? base.producers() : producers,
                rate == null ? base.eventsPerSecond() : rate, members == null ? base.members() : members)
                .withKafkaMembers(kafkaMembers == null ? base.kafkaMembers() : kafkaMembers);
        Report report = run(config, System.out);
        System.out.println("[torture] replay: scripts/torture.sh --seconds " + duration.toSeconds() + " --seed " + seed
                + " --strategies " + String.join(",", config.strategies()));
        System.exit(report.passed() ? 0 : 1);
    }
}
