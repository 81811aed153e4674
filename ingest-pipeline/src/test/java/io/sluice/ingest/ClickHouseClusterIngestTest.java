package io.sluice.ingest;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.testkit.Await;
import io.sluice.testkit.ChildJvm;
import io.sluice.testkit.ClickHouseCluster;
import io.sluice.testkit.ClickHouseServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static io.sluice.ingest.Tables.event;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A ClickHouse cluster as the target: 2 shards × 2 replicas of 18.16 on one private ZooKeeper
 * ({@link ClickHouseCluster}). The journal strategy writes each partition's offset-range batches straight into its
 * shard's {@code ReplicatedMergeTree} local table. Plain (not Replacing) MergeTree: a duplicate would stay visible.
 */
class ClickHouseClusterIngestTest {
    static final String DB = "cluster_it";
    static ClickHouseCluster cluster;

    @TempDir
    static Path dir;

    @BeforeAll
    static void startCluster() {
        cluster = ClickHouseCluster.start(2, 2);
        cluster.onEveryNode("CREATE DATABASE IF NOT EXISTS " + DB);
    }

    @BeforeEach
    void everyNodeRuns() {
        cluster.startAll();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** The local table on every node, the Distributed table over it, and the DDL Sluice may run itself. */
    static String localDdl(String table) {
        return "CREATE TABLE IF NOT EXISTS " + DB + "." + table + "_local (id UInt64, name String, value Int64,"
                + " _sluice_partition UInt32, _sluice_offset UInt64) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/"
                + DB + "/" + table + "', '{replica}') ORDER BY (_sluice_partition, _sluice_offset)";
    }

    static void createTables(String table) {
        cluster.onEveryNode(localDdl(table));
        cluster.onEveryNode("CREATE TABLE IF NOT EXISTS " + DB + "." + table + " AS " + DB + "." + table + "_local ENGINE = Distributed("
                + ClickHouseCluster.CLUSTER + ", " + DB + ", " + table + "_local, rand())");
    }

    /** A query through a Distributed table reads one replica per shard, any of them: let every replica catch up. */
    static void syncReplicas(String localTable) {
        for (int shard = 1; shard <= 2; shard++) {
            for (int replica = 1; replica <= 2; replica++) {
                ClickHouseServer node = cluster.node(shard, replica);
                ClickHouseServer other = cluster.node(shard, 3 - replica);
                node.execute("SYSTEM SYNC REPLICA " + DB + "." + localTable);
                Await.until("replica " + shard + "." + replica + " to hold its shard's rows", Duration.ofSeconds(60),
                        () -> count(node, localTable) == count(other, localTable));
            }
        }
    }

    static long count(ClickHouseServer node, String table) {
        try {
            return node.queryLong("SELECT count() FROM " + DB + "." + table);
        } catch (RuntimeException e) {
            return -1; // node down
        }
    }

    /** End offset minus the group's committed offset. */
    private static long lagOf(Broker broker, String group, int partition) {
        TopicPartition tp = new TopicPartition("events", partition);
        return broker.endOffset(tp) - broker.groups().committed(group, tp).orElse(0);
    }

    private static void produce(Broker broker, String topic, int from, int to) {
        try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = from; i < to; i++) {
                producer.send(ProducerRecord.of(topic, null, event(i)));
            }
            producer.flush();
        }
    }

    @Test
    void everyRowLandsOnceOnItsShardThroughAZooKeeperKillAReplicaKillAndAShardOutage() {
        createTables("events");
        int n = 40_000;
        Properties p = new Properties();
        p.setProperty("ingest.events.topic", "events");
        p.setProperty("ingest.events.clickhouse.shards", cluster.shardsSetting());
        p.setProperty("ingest.events.clickhouse.zookeeper.session.timeout.ms", Integer.toString(ClickHouseCluster.ZOOKEEPER_SESSION_TIMEOUT_MS));
        p.setProperty("ingest.events.table", DB + ".events_local");
        p.setProperty("ingest.events.table.ddl", localDdl("events"));
        p.setProperty("ingest.events.strategy", "journal");
        p.setProperty("ingest.events.batch.rows", "1000");
        p.setProperty("ingest.events.linger.ms", "20");
        p.setProperty("ingest.events.retry.initial.ms", "20");
        p.setProperty("ingest.events.retry.max.ms", "500");
        p.setProperty("ingest.events.insert.timeout.ms", "10000");
        IngestConfig config = IngestPipeline.configsFromProperties(p).get(0);
        ClickHouseServer s1r1 = cluster.node(1, 1);
        ClickHouseServer s1r2 = cluster.node(1, 2);
        ClickHouseServer s2r1 = cluster.node(2, 1);
        ClickHouseServer s2r2 = cluster.node(2, 2);
        try (Broker broker = Broker.open(BrokerConfig.builder(dir.resolve("events")).build())) {
            broker.createTopic(TopicConfig.of("events", 4));
            try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
                // ZooKeeper SIGKILLed while the first rows are on their way: every replicated table turns read-only
                // (or its inserts fail with the lost session); the pipeline retries until ZooKeeper is back
                cluster.killZooKeeper();
                produce(broker, "events", 0, n / 4);
                // held back while ZooKeeper is down: inserts fail and are retried, or, on a replicated table, the check
                // of what already landed (rows count only in parts registered in ZooKeeper) waits before any insert
                Await.until("inserts, or the landing check before them, to fail and be retried while ZooKeeper is down",
                        Duration.ofSeconds(30), () -> pipeline.metrics().get("retries").longValue() > 0
                                || pipeline.state() == PipelineState.RETRYING);
                LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(3));
                cluster.startZooKeeper();
                Await.until("rows on both shards", Duration.ofSeconds(90),
                        () -> count(s1r1, "events_local") > 0 && count(s2r1, "events_local") > 0);

                // a replica of shard 1 SIGKILLed: its shard's inserts move to the other replica once the killed one's
                // ZooKeeper session expired (the writer fence, ShardWriter). The other replica must first hold every
                // part the killed one committed (else it would decide what is missing without them): a part only the
                // killed replica holds keeps the shard waiting until it returns, so shard 1 is quiet and its second
                // replica synced when the kill comes
                Await.until("shard 1's partitions committed to their end", Duration.ofSeconds(90),
                        () -> lagOf(broker, config.group(), 0) == 0 && lagOf(broker, config.group(), 2) == 0);
                s1r2.execute("SYSTEM SYNC REPLICA " + DB + ".events_local");
                s1r1.kill();
                long before = count(s1r2, "events_local");
                produce(broker, "events", n / 4, n / 2);
                Await.until("shard 1 keeps landing on its second replica", Duration.ofSeconds(60),
                        () -> count(s1r2, "events_local") > before);

                // the whole of shard 2 down for a while: only its partitions (1, 3) wait; shard 1's (0, 2) land
                s2r1.stop();
                s2r2.stop();
                produce(broker, "events", n / 2, n);
                Await.until("shard 1's partitions committed to their end while shard 2 is down", Duration.ofSeconds(90),
                        () -> lagOf(broker, config.group(), 0) == 0 && lagOf(broker, config.group(), 2) == 0);
                assertThat(lagOf(broker, config.group(), 1) + lagOf(broker, config.group(), 3)).isPositive();
                assertThat(pipeline.failure()).isNull();

                s1r1.start();
                s2r1.start();
                s2r2.start();
                Await.until("every row through the Distributed table", Duration.ofSeconds(120),
                        () -> count(s1r2, "events") == n);
                Await.until("committed to the end", Duration.ofSeconds(30), () -> pipeline.metrics().get("lag").longValue() == 0);
                System.out.println("cluster ingest: " + pipeline.metrics());
            }
        }
        // s1r1 was killed: it fetches the parts it missed from s1r2. Until it has them, a query through the
        // Distributed table may read the lagging replica (any replica of a shard serves it), so sync first.
        syncReplicas("events_local");
        // exactly once over the whole cluster, and each partition on its own shard only (partition mod 2)
        assertThat(Tables.contentSummary(s1r2, DB + ".events")).isEqualTo(Tables.expectedSummary(n));
        assertThat(s1r1.queryLines("SELECT DISTINCT _sluice_partition % 2 FROM " + DB + ".events_local")).containsExactly("0");
        assertThat(s2r1.queryLines("SELECT DISTINCT _sluice_partition % 2 FROM " + DB + ".events_local")).containsExactly("1");
        // the replicas of a shard agree after replication
        assertThat(count(s1r1, "events_local")).isEqualTo(n / 2).isEqualTo(count(s1r2, "events_local"));
        assertThat(count(s2r1, "events_local")).isEqualTo(n / 2).isEqualTo(count(s2r2, "events_local"));
    }

    @Test
    void anIngesterSigkilledInFrontOfTheClusterLosesNothingAndDoublesNothing() throws Exception {
        createTables("crash");
        int n = 40_000;
        Path brokerDir = dir.resolve("crash");
        try (Broker broker = Broker.open(BrokerConfig.builder(brokerDir).build())) {
            broker.createTopic(TopicConfig.of("crash", 4));
            produce(broker, "crash", 0, n);
        }
        ClickHouseServer s1 = cluster.node(1, 1);
        ClickHouseServer s2 = cluster.node(2, 1);
        long atKill;
        try (ChildJvm child = ChildJvm.start(CrashChild.class, "cluster", brokerDir.toString(), cluster.shardsSetting(),
                DB + ".crash_local", "crash")) {
            assertThat(child.readLine()).startsWith("started");
            Await.until("rows on both shards", Duration.ofSeconds(90),
                    () -> count(s1, "crash_local") > 0 && count(s2, "crash_local") > 0);
            child.kill();
            atKill = count(s1, "crash_local") + count(s2, "crash_local");
        }
        assertThat(atKill).isLessThan(n);
        Properties p = new Properties();
        p.setProperty("ingest.crash.topic", "crash");
        p.setProperty("ingest.crash.clickhouse.shards", cluster.shardsSetting());
        p.setProperty("ingest.crash.clickhouse.zookeeper.session.timeout.ms", Integer.toString(ClickHouseCluster.ZOOKEEPER_SESSION_TIMEOUT_MS));
        p.setProperty("ingest.crash.table", DB + ".crash_local");
        p.setProperty("ingest.crash.strategy", "offset-range");
        p.setProperty("ingest.crash.batch.rows", "1000");
        p.setProperty("ingest.crash.linger.ms", "5");
        try (Broker broker = Broker.open(BrokerConfig.builder(brokerDir).build());
             IngestPipeline pipeline = IngestPipeline.start(IngestPipeline.configsFromProperties(p).get(0), broker::newConsumer)) {
            Await.until("every row through the Distributed table", Duration.ofSeconds(120), () -> count(s1, "crash") == n);
            Await.until("committed to the end", Duration.ofSeconds(30), () -> pipeline.metrics().get("lag").longValue() == 0);
            System.out.println("cluster ingest after SIGKILL: " + atKill + " rows at the kill; " + pipeline.metrics());
        }
        syncReplicas("crash_local");
        assertThat(Tables.contentSummary(s1, DB + ".crash")).isEqualTo(Tables.expectedSummary(n));
    }

    @Test
    void insertingThroughADistributedTableLandsEveryRow() {
        createTables("dist");
        int n = 10_000;
        IngestConfig config = IngestConfig.builder("dist").clickHouseUrl(cluster.node(1, 1).url()).table(DB + ".dist")
                .strategy(Strategy.OFFSET_RANGE).topic("dist").batchRows(1_000).lingerMs(20).build();
        try (Broker broker = Broker.open(BrokerConfig.builder(dir.resolve("dist")).build())) {
            broker.createTopic(TopicConfig.of("dist", 2));
            try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
                produce(broker, "dist", 0, n);
                // the Distributed table forwards to the shards in the background: count through it
                Await.until("every row through the Distributed table", Duration.ofSeconds(90),
                        () -> count(cluster.node(2, 2), "dist") == n);
                assertThat(pipeline.failure()).isNull();
            }
        }
        syncReplicas("dist_local");
        assertThat(Tables.contentSummary(cluster.node(1, 1), DB + ".dist")).isEqualTo(Tables.expectedSummary(n));
        assertThat(count(cluster.node(1, 1), "dist_local")).isPositive().isLessThan(n); // spread over both shards
    }
}
