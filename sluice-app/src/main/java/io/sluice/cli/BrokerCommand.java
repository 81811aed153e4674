package io.sluice.cli;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.RollCycleType;
import io.sluice.core.SluiceException;
import io.sluice.core.WaitStrategyType;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.IngestPipeline;
import io.sluice.net.http.GaugeRegistry;
import io.sluice.net.security.TlsConfig;
import io.sluice.net.server.BrokerServer;
import io.sluice.net.server.BrokerServerConfig;

import java.io.IOException;
import java.io.PrintStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * {@code sluice broker}: opens the core broker on a data directory and serves it over the binary protocol and HTTP
 * until SIGTERM / SIGINT, then shuts down gracefully: stop accepting, answer in-flight requests, close the core
 * broker (which drains every accepted event to the journal).
 */
final class BrokerCommand implements SluiceCli.Command {
    static final String AUTH_TOKEN_ENV = "SLUICE_AUTH_TOKEN";

    @Override
    public String usage() {
        return """
                usage: sluice broker [--config FILE] [--data-dir DIR] [--bind ADDR] [--port N] [--http-port N]

                  --config FILE    Java .properties file (keys below); flags override it
                  --data-dir DIR   topics, journals and offsets (default ./data)
                  --bind ADDR      interface for both ports (default 127.0.0.1; 0.0.0.0 exposes the broker)
                  --port N         binary protocol port (default 7070)
                  --http-port N    HTTP port (default 8080; 0 disables HTTP)

                config keys (defaults in brackets):
                  data.dir [./data]  bind [127.0.0.1]  port [7070]  http.port [8080]
                  io.threads [cores]  max.frame.size [16777216]  max.inflight.per.connection [256]
                  max.connections [10000]  idle.timeout.ms [600000]  frame.timeout.ms [30000]
                  max.fetch.wait.ms [30000]  max.fetch.bytes [1048576]
                  shutdown.timeout.ms [10000]  ring.size [16384]  max.event.size [1048576]
                  wait.strategy [sleeping|blocking|yielding|busy_spin]  roll.cycle [hourly|...]
                  min.free.disk.bytes [67108864]  (journals refuse appends below this much free disk)
                  auth.token.file [none]   (or the SLUICE_AUTH_TOKEN environment variable)
                  auth.max.frame.bytes [8192]  auth.timeout.ms [10000]  max.unauthenticated.connections [128]
                  http.max.unauthenticated.connections [128]  http.header.timeout.ms [10000]
                  tls.cert.file, tls.key.file [none]   PEM certificate chain and PKCS#8 key: TLS on the binary port
                """;
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws UsageException {
        Args args = Args.parse(argv, Args.set("config", "data-dir", "bind", "port", "http-port"), Set.of());
        if (args.has("help")) {
            out.print(usage());
            return SluiceCli.OK;
        }
        Properties p = new Properties();
        if (args.has("config")) {
            Path file = Path.of(args.get("config", null));
            try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                p.load(r);
            } catch (IOException e) {
                throw new UsageException("cannot read --config " + file + ": " + e.getMessage());
            }
        }
        override(p, "data.dir", args.get("data-dir", null));
        override(p, "bind", args.get("bind", null));
        override(p, "port", args.get("port", null));
        override(p, "http.port", args.get("http-port", null));
        Settings s = new Settings(p);

        BrokerConfig brokerConfig;
        BrokerServerConfig serverConfig;
        int httpPort;
        try {
            brokerConfig = BrokerConfig.builder(Path.of(s.string("data.dir", "./data")))
                    .ringSize(s.integer("ring.size", BrokerConfig.DEFAULT_RING_SIZE))
                    .maxEventSize(s.integer("max.event.size", BrokerConfig.DEFAULT_MAX_EVENT_SIZE))
                    .waitStrategy(WaitStrategyType.valueOf(s.string("wait.strategy", "sleeping").toUpperCase(Locale.ROOT)))
                    .rollCycle(RollCycleType.valueOf(s.string("roll.cycle", "hourly").toUpperCase(Locale.ROOT)))
                    .minFreeDiskBytes(s.longValue("min.free.disk.bytes", BrokerConfig.DEFAULT_MIN_FREE_DISK_BYTES))
                    .build();
            String bind = s.string("bind", BrokerServerConfig.DEFAULT_BIND_ADDRESS);
            serverConfig = BrokerServerConfig.builder()
                    .bindAddress(bind)
                    .port(s.integer("port", BrokerServerConfig.DEFAULT_PORT))
                    .ioThreads(s.integer("io.threads", Runtime.getRuntime().availableProcessors()))
                    .maxFrameSize(s.integer("max.frame.size", io.sluice.net.protocol.Frames.DEFAULT_MAX_FRAME_SIZE))
                    .maxInFlightPerConnection(s.integer("max.inflight.per.connection", 256))
                    .maxConnections(s.integer("max.connections", 10_000))
                    .idleTimeoutMillis(s.integer("idle.timeout.ms", 600_000))
                    .frameTimeoutMillis(s.integer("frame.timeout.ms", 30_000))
                    .maxFetchWaitMillis(s.integer("max.fetch.wait.ms", 30_000))
                    .maxFetchBytes(s.integer("max.fetch.bytes", 1 << 20))
                    .shutdownTimeoutMillis(s.integer("shutdown.timeout.ms", 10_000))
                    .authMaxFrameBytes(s.integer("auth.max.frame.bytes", BrokerServerConfig.DEFAULT_AUTH_MAX_FRAME_BYTES))
                    .authTimeoutMillis(s.longValue("auth.timeout.ms", BrokerServerConfig.DEFAULT_AUTH_TIMEOUT_MILLIS))
                    .maxUnauthenticatedConnections(s.integer("max.unauthenticated.connections",
                            BrokerServerConfig.DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS))
                    .authToken(authToken(s))
                    .sslContext(tls(s))
                    .build();
            httpPort = s.integer("http.port", 8080);
            if (httpPort < 0 || httpPort > 65535) {
                throw new UsageException("http.port must be between 0 and 65535, got " + httpPort);
            }
        } catch (IllegalArgumentException | SluiceException e) {
            throw new UsageException(e.getMessage());
        }

        CountDownLatch stopped = new CountDownLatch(1);
        Broker broker;
        BrokerServer server;
        AutoCloseable http;
        List<IngestPipeline> pipelines = new ArrayList<>();
        GaugeRegistry gauges = new GaugeRegistry();
        io.sluice.net.http.HealthRegistry health = new io.sluice.net.http.HealthRegistry();
        try {
            broker = Broker.open(brokerConfig);
        } catch (RuntimeException e) {
            err.println("sluice broker: cannot open " + brokerConfig.dataDir() + ": " + e.getMessage());
            return SluiceCli.FAILED;
        }
        try {
            server = BrokerServer.start(broker, serverConfig);
        } catch (RuntimeException e) {
            err.println("sluice broker: " + e.getMessage());
            broker.close();
            return SluiceCli.FAILED;
        }
        gauges.register("binary", () -> server.stats().asGauges());
        try {
            // ingest.<name>.* sections: pipelines from a topic into ClickHouse, consuming in-process
            for (IngestConfig ingest : IngestPipeline.configsFromProperties(p)) {
                IngestPipeline pipeline = IngestPipeline.start(ingest, broker::newConsumer);
                pipelines.add(pipeline);
                gauges.register("ingest_" + ingest.name(), pipeline::metrics);
                health.register("ingest." + ingest.name(), () -> IngestHealth.of(pipeline));
                out.println("sluice broker: ingesting topic '" + ingest.topic() + "' into " + ingest.table()
                        + " (" + ingest.strategy() + ", " + (pipeline.guarantee() == null ? "guarantee known once ClickHouse answers"
                        : pipeline.guarantee().label()) + ")");
            }
            List<IngestPipeline> running = List.copyOf(pipelines);
            gauges.register("ingest", () -> IngestHealth.gauges(running));
            http = HttpPort.start(broker, gauges, health, p, serverConfig.bindAddress(), httpPort, serverConfig.authToken(), out);
        } catch (RuntimeException e) {
            err.println("sluice broker: " + e.getMessage());
            server.close();
            pipelines.forEach(pipeline -> closeQuietly(pipeline, err));
            broker.close();
            return SluiceCli.FAILED;
        }
        out.println("sluice broker: binary protocol on " + server.localAddress().getHostString() + ":" + server.port()
                + " (" + server.transport() + "), data in " + brokerConfig.dataDir().toAbsolutePath());
        out.flush();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.close();
                closeQuietly(http, err);
                pipelines.forEach(pipeline -> closeQuietly(pipeline, err));
                broker.close();
                out.println("sluice broker: stopped");
                out.flush();
            } finally {
                stopped.countDown();
            }
        }, "sluice-broker-shutdown"));
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return SluiceCli.OK;
    }

    private static String authToken(Settings s) throws UsageException {
        String file = s.string("auth.token.file", null);
        if (file != null) {
            try {
                return Files.readString(Path.of(file), StandardCharsets.UTF_8).strip();
            } catch (IOException e) {
                throw new UsageException("cannot read auth.token.file " + file + ": " + e.getMessage());
            }
        }
        String env = System.getenv(AUTH_TOKEN_ENV);
        return env == null || env.isBlank() ? null : env.strip();
    }

    private static io.netty.handler.ssl.SslContext tls(Settings s) throws UsageException {
        String cert = s.string("tls.cert.file", null);
        String key = s.string("tls.key.file", null);
        if (cert == null && key == null) {
            return null;
        }
        try {
            return new TlsConfig(cert == null ? null : Path.of(cert), key == null ? null : Path.of(key), null, null).newServerContext();
        } catch (SluiceException e) {
            throw new UsageException(e.getMessage());
        }
    }

    private static void closeQuietly(AutoCloseable c, PrintStream err) {
        try {
            c.close();
        } catch (Exception e) {
            err.println("sluice broker: closing " + c + " failed: " + e);
        }
    }

    private static void override(Properties p, String key, String value) {
        if (value != null) {
            p.setProperty(key, value);
        }
    }

    /** Typed reads of the properties, each error naming the key. */
    private record Settings(Properties p) {
        String string(String key, String fallback) {
            String v = p.getProperty(key);
            return v == null || v.isBlank() ? fallback : v.strip();
        }

        long longValue(String key, long fallback) throws UsageException {
            String v = string(key, null);
            if (v == null) {
                return fallback;
            }
            try {
                return Long.parseLong(v.replace("_", ""));
            } catch (NumberFormatException e) {
                throw new UsageException(key + " must be a number, got '" + v + "'");
            }
        }

        int integer(String key, int fallback) throws UsageException {
            String v = string(key, null);
            if (v == null) {
                return fallback;
            }
            try {
                return Integer.parseInt(v.replace("_", ""));
            } catch (NumberFormatException e) {
                throw new UsageException(key + " must be a number, got '" + v + "'");
            }
        }
    }
}
