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
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Issue 24, exclusion independent of settings: two {@code sluice ingest} members of one group on one table with
 * offset columns, with different {@code batch.rows}, {@code batch.bytes} and {@code linger.ms} (so they cut
 * overlapping ranges at different offsets), while the ClickHouse proxy delivers every third INSERT late (after
 * {@code insert.timeout.ms}) and member A is SIGSTOPped past its session (its partitions go to B; A's late INSERTs
 * of those ranges reach the server while B inserts them cut its own way), then SIGCONTed as a zombie. Counts rows
 * against the acknowledged events.
 */
public final class MixedSettings {
    /** Figures of one run. */
    public record Result(long acked, long rows, long distinct, long lost, long duplicated, long delayedInserts,
                         long bRowsBeforeResume, int partitionsOfBWhilePaused) {
        @Override
        public String toString() {
            return "acknowledged " + acked + ", rows " + rows + ", distinct ids " + distinct + ", lost " + lost
                    + ", duplicated " + duplicated + ", INSERTs delivered late: " + delayedInserts
                    + ", partitions member B owned while A was paused: " + partitionsOfBWhilePaused
                    + ", rows in the table when the paused member resumed: " + bRowsBeforeResume;
        }
    }

    /** The group of both members (the cluster's offset-range ingest, A, and B). */
    static final String GROUP = "ingest-journal";

    private MixedSettings() {
    }

    /**
     * @param eventsPerSecond steady produce rate for {@code seconds}
     */
    public static Result run(Path runDir, int eventsPerSecond, int seconds) throws Exception {
        long insertTimeout = 500;
        TortureConfig config = new TortureConfig(1, Duration.ofSeconds(1), Set.of("journal"), EnumSet.noneOf(FaultKind.class),
                1, eventsPerSecond, 0, 0, 4, 3_000, insertTimeout, Duration.ofMinutes(3), runDir, java.util.Map.of());
        try (Cluster cluster = new Cluster(config)) {
            AtomicLong inserts = new AtomicLong();
            AtomicLong delayed = new AtomicLong();
            cluster.clickHouseProxy().onRequest(r -> {
                if (r.isInsert() && inserts.incrementAndGet() % 3 == 0) {
                    delayed.incrementAndGet();
                    return FaultProxy.Fault.delay(Duration.ofMillis(4 * insertTimeout));
                }
                return FaultProxy.Fault.PASS;
            });
            cluster.start(); // member A: batch.rows 500, linger.ms 50, batch.bytes default (16 MiB)
            String table = cluster.tables().get(0).name();
            int partitionsOfB;
            try (Node b = new Node("ingest-b", runDir, "256m", Map.of(), "sluice ingest: IngestConfig[",
                    "ingest", "--bootstrap", cluster.bootstrap(), "--topic", Cluster.TOPIC, "--clickhouse", cluster.clickHouseProxy().url(),
                    "--table", table, "--strategy", "offset-range", "--batch-rows", "777", "--linger-ms", "7",
                    "--group", GROUP, "--metrics-interval-s", "0",
                    "--set", "batch.bytes=4096", "--set", "max.in.flight=3",
                    "--set", "insert.timeout.ms=" + insertTimeout, "--set", "retry.max.ms=2000")) {
                BitSet acked = new BitSet();
                AtomicLong sent = new AtomicLong();
                Thread producer = new Thread(() -> produce(cluster.bootstrap(), eventsPerSecond, seconds, acked, sent), "mixed-producer");
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
                    Await.until("an INSERT held late by the proxy", Duration.ofSeconds(60), () -> cluster.clickHouseProxy().delayedPending() > 0);
                    cluster.ingest().pause(); // past its 10 s session: its partitions go to B, its late INSERTs still arrive
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
                producer.join();
                BitSet ackedNow;
                synchronized (acked) {
                    ackedNow = (BitSet) acked.clone();
                }
                Torture.settle(config, cluster, null, ackedNow, System.out);
                long rows = rows(cluster, table);
                BitSet present = new BitSet();
                for (String line : cluster.clickHouse().queryLines("SELECT id FROM " + table + " GROUP BY id")) {
                    present.set(Integer.parseInt(line.trim()));
                }
                BitSet lost = (BitSet) ackedNow.clone();
                lost.andNot(present);
                return new Result(ackedNow.cardinality(), rows, present.cardinality(), lost.cardinality(),
                        rows - present.cardinality(), delayed.get(), atResume, partitionsOfB);
            }
        }
    }

    private static long rows(Cluster cluster, String table) {
        return cluster.clickHouse().queryLong("SELECT count() FROM " + table);
    }

    private static void produce(String bootstrap, int eventsPerSecond, int seconds, BitSet acked, AtomicLong sent) {
        long period = TimeUnit.SECONDS.toNanos(1) / eventsPerSecond;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        try (RemoteProducer producer = new RemoteProducer(bootstrap, ProducerConfig.builder().acks(Acks.JOURNAL).build())) {
            long next = System.nanoTime();
            while (next - end < 0) {
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
