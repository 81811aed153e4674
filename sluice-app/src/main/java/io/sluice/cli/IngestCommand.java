package io.sluice.cli;

import io.sluice.core.SluiceException;
import io.sluice.ingest.ConsumerFactory;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.IngestPipeline;
import io.sluice.ingest.PipelineState;
import io.sluice.net.client.RemoteConsumer; // javadoc

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * {@code bin/sluice ingest}: runs one ingest pipeline against a running broker until interrupted (SIGINT/SIGTERM
 * close it cleanly: what was taken from the topic lands, offsets are committed). Exit codes: 0 after a clean
 * stop, 1 when the pipeline cannot start (ClickHouse unreachable, table invalid), 2 for bad usage.
 *
 * <p>The pipeline reads the topic with a {@link RemoteConsumer} connected to {@code --bootstrap}; tests may pass
 * another consumer factory ({@link #run(String[], Function)}). A topic that does not exist yet is waited for, as
 * Kafka Connect does: the pipeline says so once (log and stdout) and starts when the topic is created.
 */
@Command(name = "ingest", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run one ingest pipeline from a topic of a running broker (or of Kafka, with --source kafka) into a ClickHouse table, until SIGINT/SIGTERM "
                + "(what was taken from the topic lands, offsets are committed).",
                "Exit codes: 0 after a clean stop, 1 when the pipeline cannot start or stops on an error, 2 for bad usage.",
                "Every option is an ingest setting (docs/configuration.md); --set gives any other."})
public final class IngestCommand extends SubCommand {
    @Option(names = "--source", paramLabel = "NAME", defaultValue = "sluice",
            description = "sluice (default): a Sluice broker; kafka: a Kafka cluster, read as a Kafka consumer group (source)")
    String source;
    @Option(names = "--bootstrap", required = true, paramLabel = "HOST:PORT",
            description = "the broker's binary port, or the Kafka bootstrap servers with --source kafka")
    String bootstrap;
    @Option(names = "--topic", required = true, paramLabel = "TOPIC", description = "topic to ingest (topic)")
    String topic;
    @Option(names = "--clickhouse", required = true, paramLabel = "URL", description = "ClickHouse HTTP interface (clickhouse.url)")
    String clickhouse;
    @Option(names = "--table", required = true, paramLabel = "DB.TABLE", description = "target table (table)")
    String table;
    @Option(names = "--strategy", paramLabel = "NAME", defaultValue = "offset-range",
            description = "sync | async | coalescing | redis-stream | worker-pool | offset-range (default: ${DEFAULT-VALUE}; "
                    + "journal is accepted as its former name)")
    String strategy;
    @Option(names = "--user", paramLabel = "NAME", description = "ClickHouse user (clickhouse.user; default \"default\")")
    String user;
    @Option(names = "--password-env", paramLabel = "VAR", description = "environment variable holding the ClickHouse password (clickhouse.password.env)")
    String passwordEnv;
    @Option(names = "--create-table", paramLabel = "DDL", description = "CREATE TABLE statement to run before validating the table (table.ddl)")
    String createTable;
    @Option(names = "--encoder", paramLabel = "CLASS", description = "RowEncoder class for typed RowBinary rows (row.encoder; default: JSON passthrough)")
    String encoder;
    @Option(names = "--batch-rows", paramLabel = "N", description = "rows per INSERT (batch.rows; default 10000)")
    String batchRows;
    @Option(names = "--batch-bytes", paramLabel = "N", description = "bytes per INSERT (batch.bytes; default 16777216)")
    String batchBytes;
    @Option(names = "--linger-ms", paramLabel = "N", description = "longest wait to fill a batch (linger.ms; default 50)")
    String lingerMs;
    @Option(names = "--max-in-flight", paramLabel = "N", description = "INSERTs in flight (max.in.flight; default 2)")
    String maxInFlight;
    @Option(names = "--workers", paramLabel = "N", description = "drainers for worker-pool (workers; default 2)")
    String workers;
    @Option(names = "--redis", paramLabel = "URL", description = "redis://host:port for redis-stream / worker-pool (redis.url)")
    String redis;
    @Option(names = "--group", paramLabel = "NAME", description = "Sluice consumer group (group; default sluice-ingest-<table>)")
    String group;
    @Option(names = "--set", paramLabel = "KEY=VALUE", description = "any other ingest setting (docs/configuration.md), repeatable")
    Map<String, String> set = new LinkedHashMap<>();
    @Option(names = "--metrics-interval-s", paramLabel = "N", defaultValue = "10", description = "print metrics every N seconds (default: ${DEFAULT-VALUE}, 0 = never)")
    long metricsEvery;

    private final Function<String, ConsumerFactory> remote;

    IngestCommand(PrintStream out, PrintStream err, Function<String, ConsumerFactory> remote) {
        super(out, err);
        this.remote = remote;
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs against the broker at {@code --bootstrap} through {@link RemoteConsumer}. */
    public static int run(String[] args) {
        return run(args, ConsumerFactory::remote);
    }

    public static int run(String[] args, Function<String, ConsumerFactory> remote) {
        return run(args, remote, System.out, System.err);
    }

    static int run(String[] args, Function<String, ConsumerFactory> remote, PrintStream out, PrintStream err) {
        try {
            return new IngestCommand(out, err, remote).runAlone(args);
        } catch (UsageException e) {
            throw new IllegalStateException(e); // run() reports usage errors as exit code 2
        }
    }

    @Override
    int execute() throws UsageException {
        Properties props = new Properties();
        set.forEach(props::setProperty);
        put(props, IngestConfig.TOPIC, topic);
        put(props, IngestConfig.CLICKHOUSE_URL, clickhouse);
        put(props, IngestConfig.TABLE, table);
        put(props, IngestConfig.STRATEGY, strategy);
        put(props, IngestConfig.CLICKHOUSE_USER, user);
        put(props, IngestConfig.CLICKHOUSE_PASSWORD_ENV, passwordEnv);
        put(props, IngestConfig.TABLE_DDL, createTable);
        put(props, IngestConfig.ROW_ENCODER, encoder);
        put(props, IngestConfig.BATCH_ROWS, batchRows);
        put(props, IngestConfig.BATCH_BYTES, batchBytes);
        put(props, IngestConfig.LINGER_MS, lingerMs);
        put(props, IngestConfig.MAX_IN_FLIGHT, maxInFlight);
        put(props, IngestConfig.WORKERS, workers);
        put(props, IngestConfig.REDIS_URL, redis);
        put(props, IngestConfig.GROUP, group);
        props.putIfAbsent(IngestConfig.GROUP, "sluice-ingest-" + table);
        put(props, IngestConfig.SOURCE, source);
        if ("kafka".equalsIgnoreCase(source == null ? "" : source.strip())) {
            props.setProperty(IngestConfig.KAFKA_BOOTSTRAP, bootstrap); // read by the Kafka source, not the Sluice client
        }
        IngestConfig config;
        try {
            config = IngestConfig.fromProperties(props, "");
        } catch (SluiceException e) {
            throw new UsageException(e.getMessage());
        }
        IngestPipeline pipeline;
        try {
            pipeline = IngestPipeline.start(config, remote.apply(bootstrap), true); // waits for a topic not created yet
        } catch (SluiceException | IllegalStateException e) {
            err.println("sluice ingest: cannot start: " + e.getMessage());
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            pipeline.close();
            stopped.countDown();
        }, "sluice-ingest-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        out.println("sluice ingest: " + config);
        try {
            long nextMetrics = System.nanoTime() + TimeUnit.SECONDS.toNanos(metricsEvery);
            boolean saidWaiting = false;
            while (!stopped.await(1, TimeUnit.SECONDS)) {
                if (pipeline.state() == PipelineState.WAITING_FOR_TOPIC) {
                    if (!saidWaiting) {
                        out.println("sluice ingest: " + pipeline.stateReason());
                        saidWaiting = true;
                    }
                } else {
                    saidWaiting = false;
                }
                if (pipeline.failure() != null) {
                    err.println("sluice ingest: stopped on error: " + pipeline.failure());
                    Runtime.getRuntime().removeShutdownHook(hook);
                    pipeline.close();
                    return 1;
                }
                if (metricsEvery > 0 && System.nanoTime() - nextMetrics >= 0) {
                    out.println("sluice ingest: " + pipeline.metrics());
                    nextMetrics = System.nanoTime() + TimeUnit.SECONDS.toNanos(metricsEvery);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            Runtime.getRuntime().removeShutdownHook(hook);
            pipeline.close();
        }
        out.println("sluice ingest: stopped; " + pipeline.metrics());
        return 0;
    }

    private static void put(Properties props, String key, String value) {
        if (value != null) {
            props.setProperty(key, value);
        }
    }
}
