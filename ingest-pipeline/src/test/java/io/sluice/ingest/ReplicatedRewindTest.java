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
import io.sluice.testkit.FaultProxy;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static io.sluice.ingest.Tables.contentSummary;
import static io.sluice.ingest.Tables.event;
import static io.sluice.ingest.Tables.expectedSummary;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The duplicates that seed 7 of the fault suite found in {@code replicated} (78 and 466 rows): after a broker
 * restart, the poller's look at what already landed (at the partition's assignment) waited longer than the group
 * session on a replicated ClickHouse that did not answer. It then took the records of its first poll into a batch
 * and, at the next poll, its consumer found its session expired, joined again as a new member, got the same
 * partition and went back to the committed offset. The assignment looked unchanged, so the engine took the same
 * records again into a batch cut differently ({@code [0, 600)} beside {@code [0, 300)}): ClickHouse's block
 * deduplication only drops identical blocks, so every row of the first batch landed twice, and the commit of the
 * second went backwards and was refused.
 *
 * <p>Here the same fault against real processes: a {@link FaultProxy} in front of the replicated ClickHouse holds
 * the landed look until the member's session expired, while more events arrive.
 */
@ExtendWith(ServicesExtension.class)
class ReplicatedRewindTest {
    @TempDir
    Path dir;

    @Test
    void recordsTheConsumerReadsAgainAfterItsSessionExpiredAreNotInsertedTwice() throws Exception {
        assumeTrue(ClickHouseServer.shared().isPrivate(), "needs private servers (ZooKeeper and a replicated ClickHouse)");
        ClickHouseServer replicated = ClickHouseServer.replicated();
        try (FaultProxy proxy = FaultProxy.forUrl(replicated.url());
             Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            String table = replicated.createDatabase("rewind") + ".events";
            replicated.execute("CREATE TABLE " + table + " (id UInt64, name String, value Int64, _sluice_partition UInt32,"
                    + " _sluice_offset UInt64) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/" + table + "-"
                    + System.nanoTime() + "', '{replica}') ORDER BY (_sluice_partition, _sluice_offset)");
            broker.createTopic(TopicConfig.of("rewind", 1));
            try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                for (int i = 0; i < 300; i++) {
                    producer.send(ProducerRecord.of("rewind", null, event(i)));
                }
                producer.flush();
            }
            // the look at what landed at or after the committed offset (ReplicatedLanding) does not get an answer
            AtomicBoolean holding = new AtomicBoolean(true);
            AtomicInteger held = new AtomicInteger();
            proxy.onRequest(r -> {
                if (holding.get() && r.sql() != null && r.sql().contains("_sluice_offset BETWEEN")) {
                    held.incrementAndGet();
                    return FaultProxy.Fault.delay(Duration.ofSeconds(2));
                }
                return FaultProxy.Fault.PASS;
            });
            IngestConfig config = IngestConfig.builder("rewind").clickHouseUrl(proxy.url()).table(table)
                    .strategy(Strategy.OFFSET_RANGE).topic("rewind").batchRows(1_000).lingerMs(20)
                    .maxInFlight(2).insertTimeoutMs(1_000).retryInitialMs(50).retryMaxMs(500).build();
            TopicPartition tp = new TopicPartition("rewind", 0);
            try (IngestPipeline pipeline = IngestPipeline.start(config, broker::newConsumer)) {
                assertThat(pipeline.guarantee()).isEqualTo(Guarantee.EXACTLY_ONCE_REPLICATED_DEDUP);
                // the first poll (events 0..299) is in the poller's hands while it waits at the assignment
                Await.until("the landed look held", Duration.ofSeconds(30), () -> held.get() > 0);
                try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                    for (int i = 300; i < 600; i++) {
                        producer.send(ProducerRecord.of("rewind", null, event(i)));
                    }
                    producer.flush();
                }
                Await.until("the poller's session expired", Duration.ofSeconds(60),
                        () -> broker.groups().describe(config.group()).map(d -> d.members().isEmpty()).orElse(true));
                holding.set(false);
                Await.until("every offset committed", Duration.ofSeconds(60),
                        () -> broker.groups().committed(config.group(), tp).orElse(0) == 600);
            }
            long rows = replicated.queryLong("SELECT count() FROM " + table);
            long offsets = replicated.queryLong("SELECT uniqExact(_sluice_offset) FROM " + table);
            System.out.println("[reliability] replicated, consumer sent back to the committed offset by an expired session: rows "
                    + rows + ", distinct offsets " + offsets + ", landed looks held " + held.get());
            assertThat(rows - offsets).as("rows landed twice").isZero();
            assertThat(contentSummary(replicated, table)).isEqualTo(expectedSummary(600));
        }
    }
}
