package io.sluice.faults;

import io.sluice.core.Acks;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
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
                         long bRowsBeforeResume) {
        @Override
        public String toString() {
            return "acknowledged " + acked + ", rows " + rows + ", distinct ids " + distinct + ", lost " + lost
                    + ", duplicated " + duplicated + ", INSERTs delivered late: " + delayedInserts
                    + ", rows in the table when the paused member resumed: " + bRowsBeforeResume;
        }
    }

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
            try (Node b = new Node("ingest-b", runDir, "256m", Map.of(), "sluice ingest: IngestConfig[",
                    "ingest", "--bootstrap", cluster.bootstrap(), "--topic", Cluster.TOPIC, "--clickhouse", cluster.clickHouseProxy().url(),
                    "--table", table, "--strategy", "offset-range", "--batch-rows", "777", "--linger-ms", "7",
                    "--group", "ingest-journal", "--metrics-interval-s", "0",
                    "--set", "batch.bytes=4096", "--set", "max.in.flight=3",
                    "--set", "insert.timeout.ms=" + insertTimeout, "--set", "retry.max.ms=2000")) {
                BitSet acked = new BitSet();
                AtomicLong sent = new AtomicLong();
                Thread producer = new Thread(() -> produce(cluster.bootstrap(), eventsPerSecond, seconds, acked, sent), "mixed-producer");
                producer.start();
                Await.until("member A landed rows", Duration.ofSeconds(60), () -> rows(cluster, table) > 0);
                b.start(3);
                Await.until("an INSERT held late by the proxy", Duration.ofSeconds(60), () -> cluster.clickHouseProxy().delayedPending() > 0);
                cluster.ingest().pause(); // past its 10 s session: its partitions go to B, its late INSERTs still arrive
                long pausedAt = System.nanoTime();
                long before = rows(cluster, table);
                Await.until("member B took A's partitions over and landed rows", Duration.ofSeconds(90),
                        () -> System.nanoTime() - pausedAt > TimeUnit.SECONDS.toNanos(14) && rows(cluster, table) > before);
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
                        rows - present.cardinality(), delayed.get(), atResume);
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
