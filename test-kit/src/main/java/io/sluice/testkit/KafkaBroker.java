package io.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A private Kafka node for tests: KRaft (broker and controller in one process), {@code kafka.Kafka} from the
 * {@code org.apache.kafka:kafka_2.13} jars run in a child JVM with the test's class path (the module that uses this
 * launcher declares that artifact with test scope). The storage is formatted with {@code kafka.tools.StorageTool}
 * before the first start; data, config and log live in a temporary directory. Topics are created with two
 * partitions by default; internal topics use one partition so start-up stays short. {@code new KafkaBroker()} is a
 * single-node cluster (replication factor 1); {@link KafkaCluster} starts three that vote together.
 *
 * <p>Ready when the port accepts connections and the log says the server started. Can be stopped, killed (SIGKILL)
 * and started again with the same port and data.
 */
public final class KafkaBroker extends ServerProcess {
    private final int port;
    private final int controllerPort;
    private final int nodeId;
    private String clusterId;
    private boolean formatted;

    /** A single-node cluster. */
    public KafkaBroker() {
        this(1, freePort(), freePort(), null, 1, null);
    }

    /**
     * Node {@code nodeId} of a cluster whose controllers are {@code voters} ({@code id@host:port,...}; null: this
     * node alone), internal topics replicated {@code replication} times, storage formatted with {@code clusterId}
     * (null: a new one).
     */
    KafkaBroker(int nodeId, int port, int controllerPort, String voters, int replication, String clusterId) {
        super("kafka-" + nodeId);
        this.nodeId = nodeId;
        this.port = port;
        this.controllerPort = controllerPort;
        this.clusterId = clusterId;
        String quorum = voters == null ? nodeId + "@127.0.0.1:" + controllerPort : voters;
        int minIsr = Math.max(1, replication - 1);
        String props = """
                process.roles=broker,controller
                node.id=%4$d
                controller.quorum.voters=%5$s
                listeners=PLAINTEXT://127.0.0.1:%1$d,CONTROLLER://127.0.0.1:%2$d
                advertised.listeners=PLAINTEXT://127.0.0.1:%1$d
                controller.listener.names=CONTROLLER
                inter.broker.listener.name=PLAINTEXT
                listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
                log.dirs=%3$s
                num.partitions=2
                default.replication.factor=%6$d
                min.insync.replicas=%7$d
                offsets.topic.replication.factor=%6$d
                offsets.topic.num.partitions=1
                transaction.state.log.replication.factor=%6$d
                transaction.state.log.min.isr=%7$d
                transaction.state.log.num.partitions=1
                share.coordinator.state.topic.replication.factor=%6$d
                share.coordinator.state.topic.min.isr=%7$d
                group.initial.rebalance.delay.ms=0
                auto.create.topics.enable=true
                log.flush.interval.messages=9223372036854775807
                """.formatted(port, controllerPort, dir.resolve("data").toAbsolutePath(), nodeId, quorum, replication, minIsr);
        try {
            Files.writeString(dir.resolve("server.properties"), props);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code 127.0.0.1:port}, the value of {@code bootstrap.servers}. */
    public String bootstrap() {
        return "127.0.0.1:" + port;
    }

    /** This node's {@code node.id}. */
    public int nodeId() {
        return nodeId;
    }

    @Override
    public synchronized void start() {
        format();
        super.start();
    }

    /**
     * A new random cluster id, as {@code kafka-storage random-uuid} prints. Like Kafka's {@code Uuid.randomUuid()},
     * never one starting with '-': {@code format -t -xyz} would read the id as an option and fail.
     */
    static String newClusterId() {
        byte[] id = new byte[16];
        SecureRandom random = new SecureRandom();
        String s;
        do {
            random.nextBytes(id);
            s = Base64.getUrlEncoder().withoutPadding().encodeToString(id);
        } while (s.startsWith("-"));
        return s;
    }

    void format() {
        if (formatted) {
            return;
        }
        if (clusterId == null) {
            clusterId = newClusterId();
        }
        List<String> cmd = withFastStart(ChildJvm.command("256m", "kafka.tools.StorageTool", "format", "-t", clusterId, "-c",
                dir.resolve("server.properties").toAbsolutePath().toString()));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("format.log").toFile())).start();
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException("kafka-storage format failed; see " + dir.resolve("format.log") + ": "
                        + Files.readString(dir.resolve("format.log")));
            }
            formatted = true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    protected List<String> command() {
        return withFastStart(ChildJvm.command("512m", "kafka.Kafka", dir.resolve("server.properties").toAbsolutePath().toString()));
    }

    /** C1 only and the serial collector: a test broker starts in about half the time on a busy two-core machine. */
    private static List<String> withFastStart(List<String> cmd) {
        List<String> out = new java.util.ArrayList<>(cmd);
        out.addAll(1, List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        return out;
    }

    @Override
    protected java.time.Duration readyDeadline() {
        return java.time.Duration.ofSeconds(180);
    }

    @Override
    protected boolean isReady() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
        } catch (IOException e) {
            return false;
        }
        try {
            return Files.readString(dir.resolve("stdout.log")).contains("Kafka Server started");
        } catch (IOException e) {
            return false;
        }
    }
}
