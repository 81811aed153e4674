package io.sluice.bench.ingest;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.IngestPipeline;
import io.sluice.ingest.Strategy;
import io.sluice.testkit.ClickHouseCluster;
import io.sluice.testkit.ClickHouseServer;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.locks.LockSupport;

/**
 * The figures of docs/scaling.md, in one run on one machine: how fast one embedded broker takes events
 * (journal-acknowledged produce), and how fast one ingester (journal strategy) drains a pre-filled topic into one
 * ClickHouse server (MergeTree), into a 2-shard × 2-replica cluster ({@code ReplicatedMergeTree} on a private
 * ZooKeeper, each shard's local table written directly) and into 2 shards without replication (MergeTree on the
 * first replica of each shard). Rounds alternate between the targets.
 *
 * <pre>
 * java &lt;sluice.jvm.args&gt; -cp jmh-benchmarks/target/benchmarks.jar io.sluice.bench.ingest.ClusterScaleRunner [EVENTS] [ROUNDS]
 * </pre>
 */
public final class ClusterScaleRunner {
    private static final String DB = "scale";
    private static final int PARTITIONS = 4;

    private ClusterScaleRunner() {
    }

    public static void main(String[] args) throws Exception {
        int events = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        Path dir = Files.createTempDirectory("sluice-scale-");
        ClickHouseServer single = ClickHouseServer.shared();
        single.execute("CREATE DATABASE IF NOT EXISTS " + DB);
        try (ClickHouseCluster cluster = ClickHouseCluster.start(2, 2);
             Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            cluster.onEveryNode("CREATE DATABASE IF NOT EXISTS " + DB);
            broker.createTopic(TopicConfig.of("events", PARTITIONS));
            long start = System.nanoTime();
            try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                for (int i = 0; i < events; i++) {
                    producer.send(ProducerRecord.of("events", null, event(i)));
                }
                producer.flush();
            }
            double produceSeconds = (System.nanoTime() - start) / 1e9;
            System.out.printf("broker: %,d events produced (one thread, journal acks, %d partitions) in %.1f s = %,.0f events/s%n",
                    events, PARTITIONS, produceSeconds, events / produceSeconds);
            System.out.println("| round | target | events | seconds | rows/s landed |");
            System.out.println("|---:|---|---:|---:|---:|");
            for (int round = 1; round <= rounds; round++) {
                String t = "r" + round;
                single.execute("CREATE TABLE " + DB + "." + t + " (id UInt64, name String, value Int64, _sluice_partition UInt32,"
                        + " _sluice_offset UInt64) ENGINE = MergeTree ORDER BY (_sluice_partition, _sluice_offset)");
                IngestConfig one = base("one-" + t).clickHouseUrl(single.url()).table(DB + "." + t).build();
                report(round, "1 server, MergeTree", events, drain(broker, one, events));
                cluster.onEveryNode("CREATE TABLE " + DB + "." + t + "_local (id UInt64, name String, value Int64,"
                        + " _sluice_partition UInt32, _sluice_offset UInt64) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/"
                        + DB + "/" + t + "', '{replica}') ORDER BY (_sluice_partition, _sluice_offset)");
                IngestConfig sharded = base("cluster-" + t).shards(cluster.shardUrls()).table(DB + "." + t + "_local").build();
                report(round, "2 shards x 2 replicas, ReplicatedMergeTree", events, drain(broker, sharded, events));
                // sharding alone: the first replica of each shard with a plain MergeTree table, no replication
                for (int s = 1; s <= 2; s++) {
                    cluster.node(s, 1).execute("CREATE TABLE " + DB + "." + t + "_plain (id UInt64, name String, value Int64,"
                            + " _sluice_partition UInt32, _sluice_offset UInt64) ENGINE = MergeTree ORDER BY (_sluice_partition, _sluice_offset)");
                }
                IngestConfig plain = base("plain-" + t).shards(java.util.List.of(java.util.List.of(cluster.node(1, 1).url()),
                        java.util.List.of(cluster.node(2, 1).url()))).table(DB + "." + t + "_plain").build();
                report(round, "2 shards x 1 replica, MergeTree", events, drain(broker, plain, events));
            }
        }
    }

    private static IngestConfig.Builder base(String name) {
        return IngestConfig.builder(name).strategy(Strategy.OFFSET_RANGE).topic("events").group("scale-" + name)
                .batchRows(50_000).lingerMs(50).maxInFlight(2);
    }

    /** Seconds from start until every event of the topic is in ClickHouse (the pipeline's own row counter). */
    private static double drain(Broker broker, IngestConfig config, int events) {
        long start = System.nanoTime();
        try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
            while (pipeline.metrics().get("rows_inserted").longValue() < events) {
                if (pipeline.failure() != null) {
                    throw new IllegalStateException("pipeline failed", pipeline.failure());
                }
                LockSupport.parkNanos(5_000_000L);
            }
            return (System.nanoTime() - start) / 1e9;
        }
    }

    private static void report(int round, String target, int events, double seconds) {
        System.out.printf("| %d | %s | %,d | %.1f | %,.0f |%n", round, target, events, seconds, events / seconds);
    }

    private static byte[] event(long i) {
        return ("{\"id\":" + i + ",\"name\":\"n" + i + "\",\"value\":" + (3 * i) + "}").getBytes(StandardCharsets.UTF_8);
    }
}
