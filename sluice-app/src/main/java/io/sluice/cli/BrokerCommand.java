package io.sluice.cli;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.SluiceException;
import io.sluice.core.config.ConfigDef;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.IngestPipeline;
import io.sluice.kafka.KafkaListener;
import io.sluice.kafka.KafkaListenerConfig;
import io.sluice.net.http.GaugeRegistry;
import io.sluice.net.http.HttpApiConfig;
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
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code sluice broker}: opens the core broker on a data directory and serves it over the binary protocol and HTTP
 * until SIGTERM / SIGINT, then shuts down gracefully: stop accepting, answer in-flight requests, close the core
 * broker (which drains every accepted event to the journal).
 */
@Command(name = "broker", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Run a broker: the binary protocol (default 127.0.0.1:7070) and the HTTP API (default :8080) "
                + "over a data directory, until SIGTERM/SIGINT; then stop accepting, answer what is in flight and drain "
                + "every accepted event to the journal.",
                "",
                "Settings (every key with its default and meaning: docs/configuration.md) come from, lowest precedence "
                        + "first: their defaults, the --config file, SLUICE_* environment variables (SLUICE_RING_SIZE for "
                        + "ring.size), then flags. A key that is not a setting is an error naming the nearest one."})
final class BrokerCommand extends SubCommand {
    @Option(names = "--config", paramLabel = "FILE", description = "Java .properties file of settings")
    Path config;

    @Option(names = "--data-dir", paramLabel = "DIR", description = "topics, journals and offsets (data.dir; default ./data)")
    String dataDir;

    @Option(names = "--bind", paramLabel = "ADDR", description = "interface for both ports (bind; default 127.0.0.1; 0.0.0.0 exposes the broker)")
    String bind;

    @Option(names = "--port", paramLabel = "N", description = "binary protocol port (port; default 7070)")
    String port;

    @Option(names = "--http-port", paramLabel = "N", description = "HTTP port (http.port; default 8080; 0 disables HTTP)")
    String httpPort;

    @Option(names = "--kafka-port", paramLabel = "N", description = "Kafka wire-protocol port (kafka.port; default off; "
            + "0 picks a free port): Kafka clients and kcat produce and consume (docs/kafka.md)")
    String kafkaPort;

    @Option(names = "--set", paramLabel = "KEY=VALUE", description = "any setting, repeatable (e.g. --set ring.size=65536)")
    Map<String, String> set = new LinkedHashMap<>();

    BrokerCommand(PrintStream out, PrintStream err) {
        super(out, err);
    }

    @Override
    int execute() throws UsageException {
        Properties file = new Properties();
        if (config != null) {
            try (Reader r = Files.newBufferedReader(config, StandardCharsets.UTF_8)) {
                file.load(r);
            } catch (IOException e) {
                throw new UsageException("cannot read --config " + config + ": " + e.getMessage());
            }
        }
        Map<String, String> flags = new LinkedHashMap<>(set);
        override(flags, BrokerConfig.DATA_DIR, dataDir);
        override(flags, BrokerServerConfig.BIND, bind);
        override(flags, BrokerServerConfig.PORT, port);
        override(flags, HttpApiConfig.PORT, httpPort);
        override(flags, KafkaListenerConfig.PORT, kafkaPort);

        BrokerConfig brokerConfig;
        BrokerServerConfig serverConfig;
        HttpApiConfig.Builder httpConfig;
        KafkaListenerConfig kafkaConfig;
        List<IngestConfig> ingestConfigs;
        try {
            BrokerSettings.Resolved resolved = BrokerSettings.resolve(file, System.getenv(), flags);
            ConfigDef.Values s = resolved.values();
            brokerConfig = BrokerConfig.builder(s).build();
            serverConfig = BrokerServerConfig.builder(s)
                    .authToken(authToken(s))
                    .sslContext(tls(s))
                    .build();
            httpConfig = HttpApiConfig.builder(s);
            kafkaConfig = KafkaListenerConfig.from(s, serverConfig);
            ingestConfigs = IngestPipeline.configsFromProperties(resolved.ingest());
        } catch (IllegalArgumentException | SluiceException e) {
            throw new UsageException(e.getMessage());
        }
        int httpPortNumber = httpConfig.build().port();

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
        server.registerMetrics(gauges);
        KafkaListener kafka = null;
        if (kafkaConfig != null) {
            try {
                kafka = KafkaListener.start(broker, kafkaConfig);
            } catch (RuntimeException e) {
                err.println("sluice broker: " + e.getMessage());
                server.close();
                broker.close();
                return SluiceCli.FAILED;
            }
            kafka.registerMetrics(gauges);
        }
        KafkaListener kafkaListener = kafka;
        try {
            // ingest.<name>.* sections: pipelines from a topic into ClickHouse, consuming in-process
            for (IngestConfig ingest : ingestConfigs) {
                IngestPipeline pipeline = IngestPipeline.start(ingest, broker::newConsumer);
                pipelines.add(pipeline);
                health.register("ingest." + ingest.name(), () -> IngestHealth.of(pipeline));
                out.println("sluice broker: ingesting topic '" + ingest.topic() + "' into " + ingest.table()
                        + " (" + ingest.strategy() + ", " + (pipeline.guarantee() == null ? "guarantee known once ClickHouse answers"
                        : pipeline.guarantee().label()) + ")");
            }
            List<IngestPipeline> running = List.copyOf(pipelines);
            gauges.register("ingest", () -> IngestHealth.gauges(running));
            IngestSeries.register(gauges, broker, running);
            http = HttpPort.start(broker, gauges, health, httpConfig, serverConfig.bindAddress(), httpPortNumber,
                    serverConfig.authToken(), out);
        } catch (RuntimeException e) {
            err.println("sluice broker: " + e.getMessage());
            server.close();
            if (kafkaListener != null) {
                kafkaListener.close();
            }
            pipelines.forEach(pipeline -> closeQuietly(pipeline, err));
            broker.close();
            return SluiceCli.FAILED;
        }
        // stoppable before it says it serves: a SIGTERM right after the port line (a supervisor, a test) found no hook
        // yet, so the broker was not closed and addShutdownHook failed with "Shutdown in progress" on stderr
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.close();
                if (kafkaListener != null) {
                    kafkaListener.close();
                }
                closeQuietly(http, err);
                pipelines.forEach(pipeline -> closeQuietly(pipeline, err));
                broker.close();
                out.println("sluice broker: stopped");
                out.flush();
            } finally {
                stopped.countDown();
            }
        }, "sluice-broker-shutdown"));
        out.println("sluice broker: binary protocol on " + server.localAddress().getHostString() + ":" + server.port()
                + " (" + server.transport() + "), data in " + brokerConfig.dataDir().toAbsolutePath());
        if (kafkaListener != null) {
            out.println("sluice broker: Kafka protocol on " + kafkaListener.localAddress().getHostString() + ":"
                    + kafkaListener.port() + " (advertised as " + kafkaListener.advertisedAddress() + ", cluster id "
                    + kafkaListener.clusterId() + ")");
        }
        out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return SluiceCli.OK;
    }

    private static String authToken(ConfigDef.Values s) throws UsageException {
        String file = s.getString(BrokerSettings.AUTH_TOKEN_FILE);
        if (file != null) {
            try {
                return Files.readString(Path.of(file), StandardCharsets.UTF_8).strip();
            } catch (IOException e) {
                throw new UsageException("cannot read auth.token.file " + file + ": " + e.getMessage());
            }
        }
        return s.getString(BrokerSettings.AUTH_TOKEN);
    }

    private static io.netty.handler.ssl.SslContext tls(ConfigDef.Values s) throws UsageException {
        String cert = s.getString(BrokerSettings.TLS_CERT_FILE);
        String key = s.getString(BrokerSettings.TLS_KEY_FILE);
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

    private static void override(Map<String, String> flags, String key, String value) {
        if (value != null) {
            flags.put(key, value);
        }
    }
}
