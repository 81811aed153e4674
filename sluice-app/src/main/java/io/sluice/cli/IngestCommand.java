package io.sluice.cli;

import io.sluice.core.SluiceException;
import io.sluice.ingest.ConsumerFactory;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.IngestPipeline;
import io.sluice.net.client.RemoteConsumer; // javadoc

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
 * another consumer factory ({@link #run(String[], Function)}).
 */
public final class IngestCommand {
    static final String USAGE = """
            usage: sluice ingest [--source sluice|kafka] --bootstrap HOST:PORT --topic TOPIC --clickhouse URL --table DB.TABLE [options]
              --source NAME          sluice (default): a Sluice broker; kafka: a Kafka cluster (journal strategy, Kafka consumer group)
              --strategy NAME        sync | async | coalescing | redis-stream | worker-pool | journal (default journal)
              --user NAME            ClickHouse user (default "default")
              --password-env VAR     environment variable holding the ClickHouse password
              --create-table DDL     CREATE TABLE statement to run before validating the table
              --encoder CLASS        RowEncoder class for typed RowBinary rows (default: JSON passthrough)
              --batch-rows N         rows per INSERT (default 10000)
              --batch-bytes N        bytes per INSERT (default 16777216)
              --linger-ms N          longest wait to fill a batch (default 50)
              --max-in-flight N      INSERTs in flight (default 2)
              --workers N            drainers for worker-pool (default 2)
              --redis URL            redis://host:port for redis-stream / worker-pool
              --group NAME           Sluice consumer group (default sluice-ingest-<table>)
              --set KEY=VALUE        any other ingest setting (see docs/ingest.md), repeatable
              --metrics-interval-s N print metrics every N seconds (default 10, 0 = never)
              --help                 this text
            """;

    private IngestCommand() {
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
        Map<String, String> opts = new LinkedHashMap<>();
        Properties props = new Properties();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                out.print(USAGE);
                return 0;
            }
            if (!a.startsWith("--") || i + 1 >= args.length) {
                err.println("sluice ingest: " + (a.startsWith("--") ? "missing value for " + a : "unexpected argument '" + a + "'"));
                err.print(USAGE);
                return 2;
            }
            String v = args[++i];
            if (a.equals("--set")) {
                int eq = v.indexOf('=');
                if (eq <= 0) {
                    err.println("sluice ingest: --set needs KEY=VALUE, got '" + v + "'");
                    return 2;
                }
                props.setProperty(v.substring(0, eq), v.substring(eq + 1));
            } else {
                opts.put(a, v);
            }
        }
        Map<String, String> keys = Map.ofEntries(
                Map.entry("--topic", "topic"), Map.entry("--clickhouse", "clickhouse.url"), Map.entry("--table", "table"),
                Map.entry("--strategy", "strategy"), Map.entry("--user", "clickhouse.user"),
                Map.entry("--password-env", "clickhouse.password.env"), Map.entry("--create-table", "table.ddl"),
                Map.entry("--encoder", "row.encoder"), Map.entry("--batch-rows", "batch.rows"),
                Map.entry("--batch-bytes", "batch.bytes"), Map.entry("--linger-ms", "linger.ms"),
                Map.entry("--max-in-flight", "max.in.flight"), Map.entry("--workers", "workers"),
                Map.entry("--redis", "redis.url"), Map.entry("--group", "group"), Map.entry("--source", "source"));
        String bootstrap = null;
        long metricsEvery = 10;
        for (Map.Entry<String, String> e : opts.entrySet()) {
            switch (e.getKey()) {
                case "--bootstrap" -> bootstrap = e.getValue();
                case "--metrics-interval-s" -> {
                    try {
                        metricsEvery = Long.parseLong(e.getValue());
                    } catch (NumberFormatException ex) {
                        err.println("sluice ingest: --metrics-interval-s must be a number, got '" + e.getValue() + "'");
                        return 2;
                    }
                }
                default -> {
                    String key = keys.get(e.getKey());
                    if (key == null) {
                        err.println("sluice ingest: unknown option " + e.getKey());
                        err.print(USAGE);
                        return 2;
                    }
                    props.setProperty(key, e.getValue());
                }
            }
        }
        for (String required : new String[]{"--bootstrap", "--topic", "--clickhouse", "--table"}) {
            if (!opts.containsKey(required)) {
                err.println("sluice ingest: " + required + " is required");
                err.print(USAGE);
                return 2;
            }
        }
        if ("kafka".equalsIgnoreCase(props.getProperty("source", "").trim())) {
            props.setProperty("kafka.bootstrap", bootstrap); // read by IngestPipeline's Kafka source, not the Sluice client
        }
        props.putIfAbsent("strategy", "journal");
        props.putIfAbsent("group", "sluice-ingest-" + props.getProperty("table"));
        IngestConfig config;
        try {
            config = IngestConfig.fromProperties(props, "");
        } catch (SluiceException e) {
            err.println("sluice ingest: " + e.getMessage());
            return 2;
        }
        IngestPipeline pipeline;
        try {
            pipeline = IngestPipeline.start(config, remote.apply(bootstrap));
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
            while (!stopped.await(1, TimeUnit.SECONDS)) {
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
}
