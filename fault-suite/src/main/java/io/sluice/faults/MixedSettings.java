package io.sluice.faults;

import io.sluice.core.Acks;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.GroupStatus;
import io.sluice.net.client.RemoteAdmin;
import io.sluice.net.client.RemoteProducer;
import io.sluice.testkit.Await;
import io.sluice.testkit.ClickHouseCluster;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.FaultProxy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Issue 24, exclusion independent of settings: two {@code sluice ingest} members of one group on one table with
 * offset columns, with different {@code batch.rows}, {@code batch.bytes} and {@code linger.ms} (so they cut
 * overlapping ranges at different offsets), each through its own ClickHouse proxy that delivers every third INSERT
 * late (after {@code insert.timeout.ms}); member A's INSERTs sent just before it is SIGSTOPped past its session are
 * held {@link #ZOMBIE_DELAY} (its partitions go to B, which inserts their ranges cut its own way; A's copies reach
 * the server after that), then A is SIGCONTed as a zombie. Counts rows against the acknowledged events. The table is
 * a {@code MergeTree}, or a {@code ReplicatedMergeTree} on a private ClickHouse with a private ZooKeeper.
 */
public final class MixedSettings {
    /** Figures of one run. */
    public record Result(long acked, long rows, long distinct, long lost, long duplicated, long delayedInserts,
                         long insertsHeldPastTakeover, long bRowsBeforeResume, int partitionsOfBWhilePaused,
                         boolean failedOver) {
        @Override
        public String toString() {
            return "acknowledged " + acked + ", rows " + rows + ", distinct ids " + distinct + ", lost " + lost
                    + ", duplicated " + duplicated + ", INSERTs delivered late: " + delayedInserts
                    + " (of member A held past B's takeover: " + insertsHeldPastTakeover + ")"
                    + ", partitions member B owned while A was paused: " + partitionsOfBWhilePaused
                    + ", rows in the table when the paused member resumed: " + bRowsBeforeResume
                    + ", rows landed on the second replica while the first was down (a shard only): " + failedOver;
        }
    }

    /** The group of both members (the cluster's offset-range ingest, A, and B). */
    static final String GROUP = "ingest-journal";

    /**
     * How late A's INSERTs sent just before its pause reach the server: well past its 10 s session and B's takeover
     * of its partitions (the assertion does not depend on it: either order must land every row once).
     */
    static final Duration ZOMBIE_DELAY = Duration.ofSeconds(40);

    /**
     * How long the first replica must stay without a running query, holding what the second holds, before it is
     * killed: longer than a statement may run ({@code max_execution_time} = T/3 = 2 s with the test cluster's 6 s
     * session timeout) plus its commit.
     */
    static final Duration QUIET_BEFORE_KILL = Duration.ofSeconds(4);

    /** How long the shard's first replica stays down at most ({@link #runOnShard}). */
    static final Duration FAILOVER_WAIT = Duration.ofSeconds(25);

    /** The longest the load runs (it stops once rows landed after the paused member resumed). */
    static final Duration MAX_LOAD = Duration.ofMinutes(5);

    private MixedSettings() {
    }

    /**
     * @param eventsPerSecond steady produce rate for at least {@code seconds}, and until rows landed after the paused
     *                        member resumed
     */
    public static Result run(Path runDir, int eventsPerSecond, int seconds) throws Exception {
        return run(runDir, eventsPerSecond, seconds, false);
    }

    /**
     * @param replicated the table is a {@code ReplicatedMergeTree} on a private ClickHouse with its own private
     *                   ZooKeeper (both members insert into it through one {@link FaultProxy}), instead of a
     *                   {@code MergeTree}
     */
    public static Result run(Path runDir, int eventsPerSecond, int seconds, boolean replicated) throws Exception {
        return run(runDir, eventsPerSecond, seconds, replicated, null);
    }

    /**
     * The same against a cluster target: one shard of two replicas ({@code clickhouse.shards}, both members list
     * both, each through its own proxies) with the shard's private ZooKeeper. While both members insert, the first
     * replica is SIGKILLed (the INSERTs move to the second) and started again; A's INSERTs held past its pause are
     * sent right after that, so they reach a replica after the shard's writer changed back.
     *
     * @param shard a {@link ClickHouseCluster} of one shard of two replicas, started by the caller
     */
    public static Result runOnShard(Path runDir, int eventsPerSecond, int seconds, ClickHouseCluster shard) throws Exception {
        return run(runDir, eventsPerSecond, seconds, false, shard);
    }

    private static Result run(Path runDir, int eventsPerSecond, int seconds, boolean replicated, ClickHouseCluster shard)
            throws Exception {
        long insertTimeout = 500;
        TortureConfig config = new TortureConfig(1, Duration.ofSeconds(1), Set.of("journal"), EnumSet.noneOf(FaultKind.class),
                1, eventsPerSecond, 0, 0, 4, 3_000, insertTimeout, Duration.ofMinutes(3), runDir, java.util.Map.of());
        List<ClickHouseServer> replicas = shard == null ? null : List.of(shard.node(1, 1), shard.node(1, 2));
        List<FaultProxy> proxiesOfB = new ArrayList<>();
        try (Cluster cluster = shard == null ? new Cluster(config, replicated) : new Cluster(config, shard);
             AutoCloseableList closeProxies = new AutoCloseableList(proxiesOfB)) {
            if (shard == null) {
                proxiesOfB.add(FaultProxy.forUrl(cluster.journalServer().url()));
            } else {
                for (ClickHouseServer replica : replicas) {
                    proxiesOfB.add(FaultProxy.forUrl(replica.url()));
                }
            }
            FaultProxy proxyOfB = proxiesOfB.get(0);
            List<FaultProxy> proxiesOfA = shard == null ? List.of(cluster.journalProxy()) : cluster.journalReplicaProxies();
            AtomicLong inserts = new AtomicLong();
            AtomicLong delayed = new AtomicLong();
            AtomicLong heldPastTakeover = new AtomicLong();
            AtomicBoolean holding = new AtomicBoolean();
            java.util.function.Function<FaultProxy.Request, FaultProxy.Fault> everyThirdLate = r -> {
                if (r.isInsert() && inserts.incrementAndGet() % 3 == 0) {
                    delayed.incrementAndGet();
                    return FaultProxy.Fault.delay(Duration.ofMillis(4 * insertTimeout));
                }
                return FaultProxy.Fault.PASS;
            };
            // on a shard: while set, INSERTs to the first replica are cut (no new part there before it is killed)
            AtomicBoolean quietFirst = new AtomicBoolean();
            for (int i = 0; i < proxiesOfB.size(); i++) {
                boolean first = shard != null && i == 0;
                proxiesOfB.get(i).onRequest(r -> first && quietFirst.get() && r.isInsert() ? FaultProxy.Fault.CUT : everyThirdLate.apply(r));
            }
            for (int i = 0; i < proxiesOfA.size(); i++) {
                boolean first = shard != null && i == 0;
                proxiesOfA.get(i).onRequest(r -> {
                    if (first && quietFirst.get() && r.isInsert()) {
                        return FaultProxy.Fault.CUT;
                    }
                    if (r.isInsert() && holding.get()) {
                        // sent by A just before its pause: reaches the server long after B took A's partitions over
                        // and inserted their ranges cut its own way (the zombie's late INSERT)
                        delayed.incrementAndGet();
                        heldPastTakeover.incrementAndGet();
                        return FaultProxy.Fault.delay(ZOMBIE_DELAY);
                    }
                    return everyThirdLate.apply(r);
                });
            }
            cluster.start(); // member A: batch.rows 500, linger.ms 50, batch.bytes default (16 MiB)
            String table = cluster.tables().get(0).name();
            List<ClickHouseServer> counted = shard == null ? List.of(cluster.journalServer()) : replicas;
            int partitionsOfB;
            boolean failedOver = shard == null;
            List<String> argsOfB = new ArrayList<>(List.of(
                    "ingest", "--bootstrap", cluster.bootstrap(), "--topic", Cluster.TOPIC, "--clickhouse", proxyOfB.url(),
                    "--table", table, "--strategy", "offset-range", "--batch-rows", "777", "--linger-ms", "7",
                    "--group", GROUP, "--metrics-interval-s", "0",
                    "--set", "batch.bytes=4096", "--set", "max.in.flight=3",
                    "--set", "insert.timeout.ms=" + insertTimeout, "--set", "retry.max.ms=2000"));
            if (shard != null) {
                argsOfB.addAll(List.of("--set", "clickhouse.shards=" + String.join(",", proxiesOfB.stream().map(FaultProxy::url).toList()),
                        "--set", "clickhouse.zookeeper.session.timeout.ms=" + ClickHouseCluster.ZOOKEEPER_SESSION_TIMEOUT_MS));
            }
            try (Node b = new Node("ingest-b", runDir, "256m", Map.of(), "sluice ingest: IngestConfig[", argsOfB.toArray(String[]::new))) {
                BitSet acked = new BitSet();
                AtomicLong sent = new AtomicLong();
                AtomicBoolean stop = new AtomicBoolean();
                Thread producer = new Thread(() -> produce(cluster.bootstrap(), eventsPerSecond, seconds, stop, acked, sent),
                        "mixed-producer");
                producer.start();
                Await.until("member A landed rows", Duration.ofSeconds(60), () -> rows(counted, table) > 0);
                b.start(3);
                Set<String> both;
                try (RemoteAdmin admin = new RemoteAdmin(cluster.bootstrap())) {
                    // both members own partitions before A stops: B's own batches (cut its way) run beside A's
                    Await.until("both members own partitions", Duration.ofSeconds(60), () -> {
                        GroupStatus g = admin.describeGroup(GROUP);
                        return g.members().size() == 2 && g.members().values().stream().noneMatch(Set::isEmpty);
                    });
                    both = admin.describeGroup(GROUP).members().keySet();
                    if (shard != null) {
                        failedOver = failOverAndBack(replicas, table, quietFirst, List.of(proxiesOfA.get(0), proxiesOfB.get(0)));
                    }
                    holding.set(true);
                    // on a shard, a few: they reach a replica that is no longer the shard's writer by then
                    int held = shard == null ? 1 : 3;
                    Await.until("INSERTs of A held past the takeover", Duration.ofSeconds(60), () -> heldPastTakeover.get() >= held);
                    cluster.ingest().pause(); // past its 10 s session: its partitions go to B, its late INSERTs still arrive
                    holding.set(false);
                    // the takeover itself, seen at the coordinator (not a wait for the session's length): one member
                    // left, one of the two, owning every partition; then rows that B landed after it
                    Await.until("member B owns every partition", Duration.ofSeconds(90), () -> {
                        GroupStatus g = admin.describeGroup(GROUP);
                        return g.members().size() == 1 && both.containsAll(g.members().keySet())
                                && g.members().values().iterator().next().size() == config.partitions();
                    });
                    partitionsOfB = admin.describeGroup(GROUP).members().values().iterator().next().size();
                }
                long before = rows(counted, table);
                Await.until("member B landed rows after the takeover", Duration.ofSeconds(90), () -> rows(counted, table) > before);
                long atResume = rows(counted, table);
                cluster.ingest().resume(); // a zombie: its batches in flight still retry until it learns it was revoked
                // the load goes on (at least `seconds`) until rows land after the resume: a busy machine can take most
                // of a fixed run to get here
                Await.until("rows landed after the paused member resumed", Duration.ofSeconds(90), () -> rows(counted, table) > atResume);
                stop.set(true);
                producer.join();
                Await.until("the late INSERTs reached the server", ZOMBIE_DELAY.multipliedBy(2),
                        () -> cluster.clickHouseProxies().stream().allMatch(p -> p.delayedPending() == 0)
                                && proxiesOfB.stream().allMatch(p -> p.delayedPending() == 0));
                BitSet ackedNow;
                synchronized (acked) {
                    ackedNow = (BitSet) acked.clone();
                }
                Torture.settle(config, cluster, null, ackedNow, System.out);
                if (shard != null) {
                    // the checker reads the first replica: let it fetch every part the second has, and the other way
                    for (ClickHouseServer replica : replicas) {
                        replica.execute("SYSTEM SYNC REPLICA " + table);
                    }
                }
                long rows = rows(counted, table);
                BitSet present = new BitSet();
                for (String line : cluster.journalServer().queryLines("SELECT id FROM " + table + " GROUP BY id")) {
                    present.set(Integer.parseInt(line.trim()));
                }
                BitSet lost = (BitSet) ackedNow.clone();
                lost.andNot(present);
                long duplicated = rows - present.cardinality();
                if (shard != null) {
                    // both replicas hold the same rows once replicated: the larger surplus counts
                    ClickHouseServer second = replicas.get(1);
                    duplicated = Math.max(duplicated, second.queryLong("SELECT count() FROM " + table)
                            - second.queryLong("SELECT uniqExact(id) FROM " + table));
                }
                return new Result(ackedNow.cardinality(), rows, present.cardinality(), lost.cardinality(),
                        duplicated, delayed.get(), heldPastTakeover.get(), atResume, partitionsOfB, failedOver);
            }
        }
    }

    /**
     * The first replica SIGKILLed while both members insert: their INSERTs move to the second replica; then started
     * again, so that A's INSERTs held next are sent while the shard's writer changes back (they reach a replica
     * that is no longer the writer by the time they are delivered), and B's INSERTs after the takeover go through
     * the returning replica.
     */
    private static boolean failOverAndBack(List<ClickHouseServer> replicas, String table, AtomicBoolean quietFirst,
                                        List<FaultProxy> toFirst) {
        ClickHouseServer first = replicas.get(0);
        ClickHouseServer second = replicas.get(1);
        // killed once the second replica holds every part the first committed (no fetch queued, its log pointer past
        // the log), new INSERTs to the first cut and the late ones delivered: else a part only the first one holds
        // makes the shard wait for its return (the writer fence), which is not the failover this run is about
        quietFirst.set(true);
        Await.until("the late INSERTs to the first replica delivered", Duration.ofSeconds(30),
                () -> toFirst.stream().allMatch(p -> p.delayedPending() == 0));
        // and that state held for longer than a statement may run (max_execution_time, T/3): an INSERT that passed the
        // proxy before the cut can still commit a part on the first replica after one look at the second (a CI run
        // killed the first replica so, and the shard rightly waited for it)
        long[] quietSince = {0};
        Await.until("the first replica quiet and the second caught up with it for " + QUIET_BEFORE_KILL, Duration.ofSeconds(60), () -> {
            // no INSERT running on the first replica (this query itself starts with SELECT)
            boolean quiet = first.queryLong("SELECT count() FROM system.processes WHERE query LIKE 'INSERT%'") == 0
                    && count(first, table) == count(second, table)
                    && second.queryLong("SELECT count() FROM system.replicas WHERE concat(database, '.', table) = '" + table
                    + "' AND inserts_in_queue = 0 AND log_pointer > log_max_index") == 1;
            long now = System.nanoTime();
            if (!quiet) {
                quietSince[0] = 0;
                return false;
            }
            if (quietSince[0] == 0) {
                quietSince[0] = now;
            }
            return now - quietSince[0] >= QUIET_BEFORE_KILL.toNanos();
        });
        long t0 = System.nanoTime();
        first.kill();
        quietFirst.set(false);
        long onSecond = count(second, table);
        // the second replica takes over once the first one's ZooKeeper session expired, unless the first one was
        // killed holding a committed part the second had not fetched yet: then the shard waits for its return (the
        // writer fence); either way the first one is started again after at most FAILOVER_WAIT
        boolean failedOver;
        try {
            Await.until("rows landed on the second replica after the first was killed", FAILOVER_WAIT,
                    () -> count(second, table) > onSecond);
            failedOver = true;
        } catch (AssertionError e) {
            failedOver = false; // reported below; the run goes on with the first replica back
        }
        long t1 = System.nanoTime();
        first.start();
        System.out.println("[reliability] shard: replica 1 SIGKILLed; " + (failedOver ? "rows landed on replica 2 after "
                + TimeUnit.NANOSECONDS.toMillis(t1 - t0) + " ms" : "no rows on replica 2 within " + FAILOVER_WAIT
                + " (the shard waited for replica 1)") + "; replica 1 started again after "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms");
        return failedOver;
    }

    /** Rows of the table: the most any of {@code servers} that answers holds (a replica may be down). */
    private static long rows(List<ClickHouseServer> servers, String table) {
        if (servers.size() == 1) {
            return servers.get(0).queryLong("SELECT count() FROM " + table);
        }
        long most = -1;
        for (ClickHouseServer server : servers) {
            most = Math.max(most, count(server, table));
        }
        return most;
    }

    private static long count(ClickHouseServer server, String table) {
        try {
            return server.queryLong("SELECT count() FROM " + table);
        } catch (RuntimeException e) {
            return -1; // down
        }
    }

    /** Closes the proxies of member B. */
    private record AutoCloseableList(List<FaultProxy> proxies) implements AutoCloseable {
        @Override
        public void close() {
            proxies.forEach(FaultProxy::close);
        }
    }

    /** Produces for at least {@code seconds}, then until {@code stop} (at most {@link #MAX_LOAD}). */
    private static void produce(String bootstrap, int eventsPerSecond, int seconds, AtomicBoolean stop, BitSet acked, AtomicLong sent) {
        long period = TimeUnit.SECONDS.toNanos(1) / eventsPerSecond;
        long start = System.nanoTime();
        long end = start + TimeUnit.SECONDS.toNanos(seconds);
        long cap = start + MAX_LOAD.toNanos();
        try (RemoteProducer producer = new RemoteProducer(bootstrap, ProducerConfig.builder().acks(Acks.JOURNAL).build())) {
            long next = System.nanoTime();
            while (next - cap < 0 && (next - end < 0 || !stop.get())) {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait); // pacing of the load, not synchronisation
                }
                next += period;
                int id = (int) sent.getAndIncrement();
                producer.send(ProducerRecord.of(Cluster.TOPIC, null, "{\"id\":" + id + ",\"p\":0}"), (partition, offset, error) -> {
                    if (error == null) {
                        synchronized (acked) {
                            acked.set(id);
                        }
                    }
                });
            }
            producer.flush();
        }
    }
}
