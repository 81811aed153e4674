package io.sluice.faults;

import io.sluice.core.Acks;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.GroupStatus;
import io.sluice.net.client.RemoteAdmin;
import io.sluice.net.client.RemoteProducer;
import io.sluice.testkit.Await;
import io.sluice.testkit.FaultProxy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.BitSet;
import java.util.EnumSet;
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
                         long insertsHeldPastTakeover, long bRowsBeforeResume, int partitionsOfBWhilePaused) {
        @Override
        public String toString() {
            return "acknowledged " + acked + ", rows " + rows + ", distinct ids " + distinct + ", lost " + lost
                    + ", duplicated " + duplicated + ", INSERTs delivered late: " + delayedInserts
                    + " (of member A held past B's takeover: " + insertsHeldPastTakeover + ")"
                    + ", partitions member B owned while A was paused: " + partitionsOfBWhilePaused
                    + ", rows in the table when the paused member resumed: " + bRowsBeforeResume;
        }
    }

    /** The group of both members (the cluster's offset-range ingest, A, and B). */
    static final String GROUP = "ingest-journal";

    /**
     * How late A's INSERTs sent just before its pause reach the server: well past its 10 s session and B's takeover
     * of its partitions (the assertion does not depend on it: either order must land every row once).
     */
    static final Duration ZOMBIE_DELAY = Duration.ofSeconds(40);

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
        long insertTimeout = 500;
        TortureConfig config = new TortureConfig(1, Duration.ofSeconds(1), Set.of("journal"), EnumSet.noneOf(FaultKind.class),
                1, eventsPerSecond, 0, 0, 4, 3_000, insertTimeout, Duration.ofMinutes(3), runDir, java.util.Map.of());
        try (Cluster cluster = new Cluster(config, replicated);
             FaultProxy proxyOfB = FaultProxy.forUrl(cluster.journalServer().url())) {
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
            proxyOfB.onRequest(everyThirdLate);
            cluster.journalProxy().onRequest(r -> {
                if (r.isInsert() && holding.get()) {
                    // sent by A just before its pause: reaches the server long after B took A's partitions over
                    // and inserted their ranges cut its own way (the zombie's late INSERT)
                    delayed.incrementAndGet();
                    heldPastTakeover.incrementAndGet();
                    return FaultProxy.Fault.delay(ZOMBIE_DELAY);
                }
                return everyThirdLate.apply(r);
            });
            cluster.start(); // member A: batch.rows 500, linger.ms 50, batch.bytes default (16 MiB)
            String table = cluster.tables().get(0).name();
            int partitionsOfB;
            try (Node b = new Node("ingest-b", runDir, "256m", Map.of(), "sluice ingest: IngestConfig[",
                    "ingest", "--bootstrap", cluster.bootstrap(), "--topic", Cluster.TOPIC, "--clickhouse", proxyOfB.url(),
                    "--table", table, "--strategy", "offset-range", "--batch-rows", "777", "--linger-ms", "7",
                    "--group", GROUP, "--metrics-interval-s", "0",
                    "--set", "batch.bytes=4096", "--set", "max.in.flight=3",
                    "--set", "insert.timeout.ms=" + insertTimeout, "--set", "retry.max.ms=2000")) {
                BitSet acked = new BitSet();
                AtomicLong sent = new AtomicLong();
                AtomicBoolean stop = new AtomicBoolean();
                Thread producer = new Thread(() -> produce(cluster.bootstrap(), eventsPerSecond, seconds, stop, acked, sent),
                        "mixed-producer");
                producer.start();
                Await.until("member A landed rows", Duration.ofSeconds(60), () -> rows(cluster, table) > 0);
                b.start(3);
                Set<String> both;
                try (RemoteAdmin admin = new RemoteAdmin(cluster.bootstrap())) {
                    // both members own partitions before A stops: B's own batches (cut its way) run beside A's
                    Await.until("both members own partitions", Duration.ofSeconds(60), () -> {
                        GroupStatus g = admin.describeGroup(GROUP);
                        return g.members().size() == 2 && g.members().values().stream().noneMatch(Set::isEmpty);
                    });
                    both = admin.describeGroup(GROUP).members().keySet();
                    holding.set(true);
                    Await.until("an INSERT of A held past the takeover", Duration.ofSeconds(60), () -> heldPastTakeover.get() > 0);
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
                long before = rows(cluster, table);
                Await.until("member B landed rows after the takeover", Duration.ofSeconds(90), () -> rows(cluster, table) > before);
                long atResume = rows(cluster, table);
                cluster.ingest().resume(); // a zombie: its batches in flight still retry until it learns it was revoked
                // the load goes on (at least `seconds`) until rows land after the resume: a busy machine can take most
                // of a fixed run to get here
                Await.until("rows landed after the paused member resumed", Duration.ofSeconds(90), () -> rows(cluster, table) > atResume);
                stop.set(true);
                producer.join();
                Await.until("the late INSERTs reached the server", ZOMBIE_DELAY.multipliedBy(2),
                        () -> proxyOfB.delayedPending() == 0 && cluster.journalProxy().delayedPending() == 0);
                BitSet ackedNow;
                synchronized (acked) {
                    ackedNow = (BitSet) acked.clone();
                }
                Torture.settle(config, cluster, null, ackedNow, System.out);
                long rows = rows(cluster, table);
                BitSet present = new BitSet();
                for (String line : cluster.journalServer().queryLines("SELECT id FROM " + table + " GROUP BY id")) {
                    present.set(Integer.parseInt(line.trim()));
                }
                BitSet lost = (BitSet) ackedNow.clone();
                lost.andNot(present);
                return new Result(ackedNow.cardinality(), rows, present.cardinality(), lost.cardinality(),
                        rows - present.cardinality(), delayed.get(), heldPastTakeover.get(), atResume, partitionsOfB);
            }
        }
    }

    private static long rows(Cluster cluster, String table) {
        return cluster.journalServer().queryLong("SELECT count() FROM " + table);
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
