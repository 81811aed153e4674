package io.sluice.faults;

import io.sluice.core.Acks;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.net.client.RemoteProducer;
import io.sluice.testkit.FaultProxy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.BitSet;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Issue 11, failure 1: the journal strategy ({@code sluice ingest}, table with offset columns) with
 * {@code insert.timeout.ms=500} while the ClickHouse proxy delays every third INSERT by 2 s — the client times out,
 * ClickHouse still receives and executes the request. The result counts rows against acknowledged events.
 */
public final class LateInserts {
    /** Figures of one run. */
    public record Result(long acked, long rows, long distinct, long lost, long duplicated, long delayedInserts) {
        @Override
        public String toString() {
            return "acknowledged " + acked + ", rows " + rows + ", distinct ids " + distinct + ", lost " + lost
                    + ", duplicated " + duplicated + ", INSERTs delayed 2 s: " + delayedInserts;
        }
    }

    private LateInserts() {
    }

    public static Result run(Path runDir, int events) throws Exception {
        TortureConfig config = new TortureConfig(1, Duration.ofSeconds(1), Set.of("journal"), EnumSet.noneOf(FaultKind.class),
                1, 1, 0, 0, 2, 3_000, 500, Duration.ofMinutes(3), runDir, java.util.Map.of());
        try (Cluster cluster = new Cluster(config)) {
            AtomicLong inserts = new AtomicLong();
            AtomicLong delayed = new AtomicLong();
            cluster.clickHouseProxy().onRequest(r -> {
                if (r.isInsert() && inserts.incrementAndGet() % 3 == 0) {
                    delayed.incrementAndGet();
                    return FaultProxy.Fault.delay(Duration.ofSeconds(2));
                }
                return FaultProxy.Fault.PASS;
            });
            cluster.start();
            BitSet acked = new BitSet();
            try (RemoteProducer producer = new RemoteProducer(cluster.bootstrap(), ProducerConfig.builder().acks(Acks.JOURNAL).build())) {
                for (int i = 0; i < events; i++) {
                    int id = i;
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
            BitSet ackedNow;
            synchronized (acked) {
                ackedNow = (BitSet) acked.clone();
            }
            Torture.settle(config, cluster, null, ackedNow, System.out);
            Cluster.Table t = cluster.tables().get(0);
            long rows = cluster.clickHouse().queryLong("SELECT count() FROM " + t.name());
            BitSet present = new BitSet();
            for (String line : cluster.clickHouse().queryLines("SELECT id FROM " + t.name() + " GROUP BY id")) {
                present.set(Integer.parseInt(line.trim()));
            }
            BitSet lost = (BitSet) ackedNow.clone();
            lost.andNot(present);
            return new Result(ackedNow.cardinality(), rows, present.cardinality(), lost.cardinality(),
                    rows - present.cardinality(), delayed.get());
        }
    }
}
