package io.sluice.ingest;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;

import java.nio.file.Path;

/**
 * The ingesting JVM of {@link SigkillTest}: runs a pipeline until it is killed.
 * Args: {@code journal DATA_DIR CLICKHOUSE_URL TABLE TOPIC}, {@code kafka BOOTSTRAP CLICKHOUSE_URL TABLE TOPIC} or
 * {@code worker-pool REDIS_URL CLICKHOUSE_URL TABLE STREAM}.
 */
public final class CrashChild {
    private CrashChild() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        IngestConfig.Builder b = IngestConfig.builder("crash").clickHouseUrl(args[2]).table(args[3])
                .batchRows(1_000).lingerMs(5).maxInFlight(3).retryInitialMs(20).retryMaxMs(200);
        if (mode.equals("journal")) {
            Broker broker = Broker.open(BrokerConfig.builder(Path.of(args[1])).build());
            IngestPipeline pipeline = IngestPipeline.start(b.strategy(Strategy.OFFSET_RANGE).topic(args[4]).build(), broker::newConsumer);
            System.out.println("started " + pipeline.config().name());
        } else if (mode.equals("cluster")) {
            // args: cluster <broker dir> <clickhouse.shards setting> <local table> <topic>
            Broker broker = Broker.open(BrokerConfig.builder(Path.of(args[1])).build());
            java.util.Properties p = new java.util.Properties();
            p.setProperty("ingest.crash.topic", args[4]);
            p.setProperty("ingest.crash.clickhouse.shards", args[2]);
            p.setProperty("ingest.crash.clickhouse.zookeeper.session.timeout.ms",
                    Integer.toString(io.sluice.testkit.ClickHouseCluster.ZOOKEEPER_SESSION_TIMEOUT_MS));
            p.setProperty("ingest.crash.table", args[3]);
            p.setProperty("ingest.crash.strategy", "offset-range");
            p.setProperty("ingest.crash.batch.rows", "1000");
            p.setProperty("ingest.crash.linger.ms", "5");
            p.setProperty("ingest.crash.max.in.flight", "3");
            IngestPipeline pipeline = IngestPipeline.start(IngestPipeline.configsFromProperties(p).get(0), broker::newConsumer);
            System.out.println("started " + pipeline.config().name());
        } else if (mode.equals("kafka")) {
            IngestPipeline pipeline = IngestPipeline.start(b.strategy(Strategy.OFFSET_RANGE).topic(args[4])
                    .source(IngestConfig.Source.KAFKA).kafkaBootstrap(args[1]).group("crash-kafka").build(), null);
            System.out.println("started " + pipeline.config().name());
        } else {
            EventSink sink = EventSink.open(b.strategy(Strategy.WORKER_POOL).redisUrl(args[1]).redisStream(args[4])
                    .workers(2).redisClaimIdleMs(1_000).build());
            System.out.println("started " + sink.metrics().size());
        }
        System.out.flush();
        Thread.currentThread().join(); // until SIGKILL
    }
}
