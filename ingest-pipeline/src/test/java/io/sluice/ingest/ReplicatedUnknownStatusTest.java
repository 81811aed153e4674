package io.sluice.ingest;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.testkit.Await;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.ServicesExtension;
import io.sluice.testkit.ZooKeeperProxy;
import io.sluice.testkit.ZooKeeperServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static io.sluice.ingest.Tables.contentSummary;
import static io.sluice.ingest.Tables.event;
import static io.sluice.ingest.Tables.expectedSummary;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Issue 24: the offset-range strategy into a {@code ReplicatedMergeTree} stays exactly-once when ClickHouse loses
 * ZooKeeper in the middle of committing a part. A {@link ZooKeeperProxy} between ClickHouse 18.16 and its ZooKeeper
 * cuts the connection at the commit's {@code multi} of the pipeline's first INSERT, without forwarding it: the
 * server keeps the part locally, visible but never registered, and answers {@code 319 UNKNOWN_STATUS_OF_INSERT}.
 * Retrying at once would show those rows twice; the pipeline instead waits until the replica has dropped the
 * unregistered part. 18.16 drops it in its part check, which it schedules 5 minutes later but does not run again
 * by itself once that time has come (the check task is not rescheduled; a restart or a new ZooKeeper session of the
 * replica runs it, and a restart moves the part aside at once): so the test watches for 20 s that nothing is sent
 * again and no row is visible twice, restarts the replica, and then checks that every row lands exactly once.
 */
@ExtendWith(ServicesExtension.class)
class ReplicatedUnknownStatusTest {
    @TempDir
    Path dir;

    private static long twice(ClickHouseServer server, String table) {
        return server.queryLong("SELECT count() - uniqExact(_sluice_offset) FROM " + table + " WHERE _sluice_partition = 0");
    }

    @Test
    void anInsertWhoseCommitLostZooKeeperIsNeverShownTwiceAndLandsOnceAfterTheReplicaDropsItsUnregisteredPart() throws Exception {
        assumeTrue(ClickHouseServer.shared().isPrivate(), "needs private servers (ZooKeeper and a replicated ClickHouse)");
        try (ZooKeeperProxy zooKeeper = new ZooKeeperProxy(ZooKeeperServer.shared().port());
             ClickHouseServer replicated = ClickHouseServer.withZooKeeperAt(zooKeeper.port());
             Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            String rdb = replicated.createDatabase("unknown_status");
            String table = rdb + ".events";
            String probe = rdb + ".probe";
            long unique = System.nanoTime();
            replicated.execute("CREATE TABLE " + table + " (id UInt64, name String, value Int64, _sluice_partition UInt32,"
                    + " _sluice_offset UInt64) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/" + table + "-" + unique
                    + "', '{replica}') ORDER BY (_sluice_partition, _sluice_offset)");
            replicated.execute("CREATE TABLE " + probe + " (x UInt8) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/"
                    + probe + "-" + unique + "', '{replica}') ORDER BY x");
            // an INSERT commits its part with a multi request that the proxy sees
            int before = zooKeeper.multisSeen();
            replicated.execute("INSERT INTO " + probe + " VALUES (1)");
            assertThat(zooKeeper.multisSeen()).as("multi requests seen").isGreaterThan(before);

            // rows of another partition first: 18.16 refuses to start a table whose unregistered rows are more than
            // half of its rows (replicated_max_ratio_of_wrong_parts), and the test restarts the replica below
            replicated.execute("INSERT INTO " + table + " SELECT number, 'other', 0, 99, number FROM system.numbers LIMIT 10000");
            broker.createTopic(TopicConfig.of("unknown", 1));
            int n = 3_000;
            try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                for (int i = 0; i < n; i++) {
                    producer.send(ProducerRecord.of("unknown", null, event(i)));
                }
                producer.flush();
            }
            // the next multi that registers a part of the table: the commit of the pipeline's first INSERT
            zooKeeper.cutMultiWriting("/clickhouse/tables/01/" + table + "-" + unique + "/replicas/r1/parts/");
            IngestConfig config = IngestConfig.builder("unknown").clickHouseUrl(replicated.url()).table(table)
                    .strategy(Strategy.OFFSET_RANGE).topic("unknown").batchRows(1_000).lingerMs(20)
                    .maxInFlight(1).insertTimeoutMs(10_000).retryInitialMs(50).retryMaxMs(1_000).build();
            long[] shownTwice = {0};
            long[] unregisteredRows = {0};
            TopicPartition tp = new TopicPartition("unknown", 0);
            try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
                assertThat(pipeline.guarantee()).isEqualTo(Guarantee.EXACTLY_ONCE_REPLICATED_DEDUP);
                // the cut batch's rows are on the replica, in a part ZooKeeper does not know
                Await.until("the commit's multi cut, leaving a part ZooKeeper does not know", Duration.ofMinutes(2), () -> {
                    if (zooKeeper.cuts() != 1) {
                        return false;
                    }
                    try {
                        unregisteredRows[0] = replicated.queryLong("SELECT count() FROM " + table + " WHERE _sluice_partition = 0 AND _part NOT IN (SELECT"
                                + " name FROM system.zookeeper WHERE path = '/clickhouse/tables/01/" + table + "-" + unique
                                + "/replicas/r1/parts')");
                    } catch (RuntimeException e) {
                        return false; // read-only until the replica has its ZooKeeper session again
                    }
                    return unregisteredRows[0] > 0;
                });
                long watchUntil = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                Await.until("20 s in which nothing is sent again", Duration.ofSeconds(60), () -> {
                    shownTwice[0] = Math.max(shownTwice[0], twice(replicated, table));
                    return System.nanoTime() - watchUntil > 0;
                });
                assertThat(broker.groups().committed(config.group(), tp).orElse(0)).as("committed past the unknown batch").isZero();
                replicated.restart(); // 18.16 moves a local part that ZooKeeper does not know aside when the table starts
                Await.until("every offset committed", Duration.ofMinutes(3), () -> {
                    try {
                        shownTwice[0] = Math.max(shownTwice[0], twice(replicated, table));
                    } catch (RuntimeException e) {
                        return false; // the replica is starting
                    }
                    return broker.groups().committed(config.group(), tp).orElse(0) == n;
                });
            }
            String errors = Files.readString(replicated.errorLog());
            System.out.println("[reliability] replicated INSERT of unknown status: connections cut at a commit "
                    + zooKeeper.cuts() + ", server answered 319: " + errors.contains("Unknown status, client must retry")
                    + ", rows in the unregistered part: " + unregisteredRows[0] + ", most rows seen twice at once: "
                    + shownTwice[0] + ", rows after the restart: " + replicated.queryLong("SELECT count() FROM " + table + " WHERE _sluice_partition = 0"));
            assertThat(zooKeeper.cuts()).isEqualTo(1);
            assertThat(errors).contains("Unknown status, client must retry");
            assertThat(unregisteredRows[0]).as("rows in the part ZooKeeper does not know").isEqualTo(1_000);
            assertThat(shownTwice[0]).as("rows visible twice while the unknown INSERT was resolved").isZero();
            replicated.execute("ALTER TABLE " + table + " DELETE WHERE _sluice_partition = 99");
            Await.until("the other partition's rows deleted", Duration.ofMinutes(1),
                    () -> replicated.queryLong("SELECT count() FROM " + table + " WHERE _sluice_partition = 99") == 0);
            assertThat(contentSummary(replicated, table)).isEqualTo(expectedSummary(n));
        }
    }
}
