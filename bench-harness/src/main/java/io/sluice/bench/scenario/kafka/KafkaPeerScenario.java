package io.sluice.bench.scenario.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.bench.BenchOptions;
import io.sluice.bench.Scenario;
import io.sluice.bench.internal.TempDir;
import io.sluice.bench.report.Better;
import io.sluice.bench.report.Goal;
import io.sluice.bench.report.Numbers;
import io.sluice.bench.report.Row;
import io.sluice.bench.report.Sample;
import io.sluice.bench.report.ScenarioResult;
import io.sluice.bench.report.Table;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.net.client.ClientConfig;
import io.sluice.net.client.RemoteAdmin;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.errors.TopicExistsException;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Kafka as a same-run peer (issue 12): a Sluice broker ({@code sluice.jar broker}) and a private single-node KRaft
 * Kafka broker ({@code kafka.Kafka}, from Maven Central through the {@code kafka-peer} module's class path file), each
 * in its own child JVM on free loopback ports and temporary directories, each with the same topic (4 partitions).
 * Sluice's {@code perf-produce} and Kafka's {@code ProducerPerformance} then run in turns (Sluice, Kafka, Sluice, ...;
 * warm-ups discarded), the same record count and size, one client each; then Sluice's {@code perf-consume} and Kafka's
 * {@code ConsumerPerformance} read that many records from the start of the topic, in turns. Every tool is a fresh
 * child JVM. CPU seconds (user + system) per million records are the broker's (read from {@code /proc} before and
 * after the run) and the tool's (bash's {@code times}).
 *
 * <p>Durability is comparable, not equal: Sluice acks=journal acknowledges once the batch is in the memory-mapped
 * journal file (no fsync); Kafka acks=1 acknowledges once the leader appended to its log (page cache; Kafka's default
 * flush policy never fsyncs on append). Both brokers are stopped at the end, also when a run fails.
 */
public final class KafkaPeerScenario implements Scenario {
    /** Kafka's version, as in the root pom's {@code kafka.version} (the class path file names the jars). */
    static final String KAFKA_VERSION = "4.1.1";
    static final Path SLUICE_JAR = Paths.get("sluice-app", "target", "sluice.jar");
    static final Path SLUICE_JVMOPTS = Paths.get("sluice-app", "target", "sluice.jvmopts");
    static final Path KAFKA_CLASSPATH = Paths.get("kafka-peer", "target", "kafka.classpath");
    private static final String BUILD_HINT = "./mvnw -B -DskipTests package -pl sluice-app,kafka-peer -am";

    static final int PARTITIONS = 4;
    static final int RECORD_SIZE = 100;
    static final String TOPIC = "peer";
    /** The topic Kafka's tools write and read on Sluice's Kafka listener (issue 23's same-client table). */
    static final String LISTENER_TOPIC = "peer-kafka-tools";
    /** Both brokers: the heap Kafka's start script gives its broker. */
    static final List<String> BROKER_HEAP = List.of("-Xms1g", "-Xmx1g");
    /** Both load tools: the heap Kafka's perf-test scripts give theirs. */
    static final List<String> TOOL_HEAP = List.of("-Xmx512m");
    /** Kafka's own JVM tuning (kafka-run-class.sh KAFKA_JVM_PERFORMANCE_OPTS), on every Kafka JVM. */
    static final List<String> KAFKA_JVM = List.of("-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
            "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15",
            "-Djava.awt.headless=true", "-Dchronicle.analytics.disable=true", "-Dchronicle.announcer.disable=true");
    /**
     * Sluice broker settings: a fetch response may carry 4 MiB (its default caps it at 1 MiB), what Kafka's consumer
     * gets from 4 partitions at its default 1 MiB per partition, and what perf-consume asks for per poll.
     */
    static final List<String> SLUICE_BROKER = List.of("--set", "max.fetch.bytes=4194304");
    /**
     * Sluice perf-produce: acknowledged once in the mapped journal file; batch size, linger and requests in flight set to
     * Kafka's below (5 ms, 5 per connection), so that both clients batch and pipeline alike.
     */
    static final List<String> SLUICE_PRODUCE = List.of("--acks", "journal", "--batch-size", "65536", "--linger-us", "5000",
            "--max-in-flight", "5");
    /** Kafka ProducerPerformance: the issue's settings (acks=1: the leader's log, page cache; no compression), in-flight spelled out. */
    static final List<String> KAFKA_PRODUCE = List.of("acks=1", "batch.size=65536", "linger.ms=5", "compression.type=none",
            "max.in.flight.requests.per.connection=5");
    /** Sluice perf-consume: its defaults, spelled out. */
    static final List<String> SLUICE_CONSUME = List.of("--max-poll-records", "10000", "--max-poll-bytes", "4194304");
    /** Kafka ConsumerPerformance: the same records per poll as Sluice's; fetch size per partition 1 MiB (its default). */
    static final List<String> KAFKA_CONSUME = List.of("max.poll.records=10000");
    static final int KAFKA_FETCH_SIZE = 1 << 20;

    private static final Duration START_DEADLINE = Duration.ofSeconds(180);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** ProducerPerformance's summary: "N records sent, R records/sec (M MB/sec), A ms avg latency, X ms max latency, P50 ms 50th, ...". */
    private static final Pattern KAFKA_PRODUCE_SUMMARY = Pattern.compile(
            "(\\d+) records sent, ([\\d.]+) records/sec \\(([\\d.]+) MB/sec\\), ([\\d.]+) ms avg latency, ([\\d.]+) ms max latency, "
                    + "(\\d+) ms 50th, (\\d+) ms 95th, (\\d+) ms 99th, (\\d+) ms 99.9th");

    @Override
    public String name() {
        return "kafka-peer";
    }

    @Override
    public String title() {
        return "Kafka " + KAFKA_VERSION + " as a same-run peer: network produce and consume, 100 B records, 4 partitions";
    }

    @Override
    public String reference() {
        return "issue 12 (same-run peer, no reference report)";
    }

    /** One tool run: records, rate, latency percentiles (ms; NaN when the tool reports none) and CPU seconds. */
    record Measured(long records, double perSecond, double p50Millis, double p99Millis, double brokerCpu, double toolCpu) {
        double brokerCpuPerMillion() {
            return brokerCpu * 1e6 / records;
        }

        double toolCpuPerMillion() {
            return toolCpu * 1e6 / records;
        }
    }

    @Override
    public ScenarioResult run(BenchOptions o) throws Exception {
        long records = Long.parseLong(o.extra().getOrDefault("records", Long.toString(o.quick() ? 20_000 : 3_000_000)));
        if (records < 1) {
            throw new IllegalArgumentException("--records must be >= 1, got " + records);
        }
        // quick (CI): no warm-up round; every tool run is a JVM start, and CI must stay short
        int warmups = o.quick() ? 0 : o.warmups();
        int iterations = o.iterations();
        List<String> notes = new ArrayList<>();
        List<Table> tables = new ArrayList<>();
        String missing = missingArtifacts();
        if (missing != null) {
            notes.add("not available: " + missing);
            return new ScenarioResult(name(), title(), reference(), tables, List.of(), notes, 0);
        }
        String kafkaClassPath = Files.readString(KAFKA_CLASSPATH, StandardCharsets.UTF_8).trim();
        try (TempDir work = new TempDir(o.workDir(), "sluice-kafka-peer-")) {
            Path sluiceDir = Files.createDirectories(work.resolve("sluice"));
            Path kafkaDir = Files.createDirectories(work.resolve("kafka"));
            Path runs = Files.createDirectories(work.resolve("runs"));
            int sluicePort = freePort();
            int listenerPort = freePort();
            int kafkaPort = freePort();
            int controllerPort = freePort();
            String sluiceBootstrap = "127.0.0.1:" + sluicePort;
            String kafkaBootstrap = "127.0.0.1:" + kafkaPort;
            String listenerBootstrap = "127.0.0.1:" + listenerPort;
            try (PeerBroker sluice = startSluice(sluiceDir, sluicePort, listenerPort);
                 PeerBroker kafka = startKafka(kafkaDir, kafkaClassPath, kafkaPort, controllerPort)) {
                createSluiceTopic(sluice, sluiceBootstrap, TOPIC);
                createSluiceTopic(sluice, sluiceBootstrap, LISTENER_TOPIC);
                createKafkaTopic(kafka, kafkaBootstrap);
                Duration deadline = Duration.ofSeconds(120 + records / 10_000);
                List<Measured> sp = new ArrayList<>();
                List<Measured> kp = new ArrayList<>();
                List<Measured> lp = new ArrayList<>();
                for (int i = 0; i < warmups + iterations; i++) {
                    boolean measured = i >= warmups;
                    Measured s = sluiceProduce(sluice, sluiceBootstrap, records, runs, i, deadline);
                    Measured k = kafkaProduce(kafka, kafkaClassPath, kafkaBootstrap, TOPIC, "kafka-produce-" + i, records,
                            runs, deadline);
                    Measured l = kafkaProduce(sluice, kafkaClassPath, listenerBootstrap, LISTENER_TOPIC,
                            "listener-produce-" + i, records, runs, deadline);
                    System.out.printf(Locale.ROOT, "  produce round %d%s: Sluice %s rec/s, Kafka %s rec/s, "
                                    + "ProducerPerformance → Sluice's Kafka listener %s rec/s%n", i + 1,
                            measured ? "" : " (warm-up)", Numbers.format(s.perSecond()), Numbers.format(k.perSecond()),
                            Numbers.format(l.perSecond()));
                    if (measured) {
                        sp.add(s);
                        kp.add(k);
                        lp.add(l);
                    }
                }
                List<Measured> sc = new ArrayList<>();
                List<Measured> kc = new ArrayList<>();
                List<Measured> lc = new ArrayList<>();
                for (int i = 0; i < warmups + iterations; i++) {
                    boolean measured = i >= warmups;
                    Measured s = sluiceConsume(sluice, sluiceBootstrap, records, runs, i, deadline);
                    Measured k = kafkaConsume(kafka, kafkaClassPath, kafkaBootstrap, TOPIC, "kafka-consume-" + i, records,
                            runs, deadline);
                    Measured l = kafkaConsume(sluice, kafkaClassPath, listenerBootstrap, LISTENER_TOPIC,
                            "listener-consume-" + i, records, runs, deadline);
                    System.out.printf(Locale.ROOT, "  consume round %d%s: Sluice %s rec/s, Kafka %s rec/s, "
                                    + "ConsumerPerformance ← Sluice's Kafka listener %s rec/s%n", i + 1,
                            measured ? "" : " (warm-up)", Numbers.format(s.perSecond()), Numbers.format(k.perSecond()),
                            Numbers.format(l.perSecond()));
                    if (measured) {
                        sc.add(s);
                        kc.add(k);
                        lc.add(l);
                    }
                }
                tables.add(SameClientTable.build(records, lp, kp, lc, kc, sp, sc));
                tables.add(produceTable(records, sp, kp));
                tables.add(consumeTable(records, sc, kc));
            }
        }
        notes.add(String.format(Locale.ROOT, "Same machine, same run: a Sluice broker (`sluice.jar broker`) and a single-node "
                + "KRaft Kafka %s broker (`kafka.Kafka` from Maven Central, class path from the `kafka-peer` module), each in "
                + "its own JVM (%s) on free loopback ports; topic `%s` with %d partitions on each. Every load tool run is a "
                + "fresh JVM (%s), one client, %,d records of %d B; Sluice and Kafka alternate run by run (%d warm-up "
                + "round(s) discarded, then %d measured); cells are medians [min–max] of the measured runs.",
                KAFKA_VERSION, String.join(" ", BROKER_HEAP), TOPIC, PARTITIONS, String.join(" ", TOOL_HEAP), records,
                RECORD_SIZE, warmups, iterations));
        notes.add("Durability is comparable, not equal: Sluice `acks=journal` acknowledges once the batch is in the "
                + "memory-mapped journal file (no fsync); Kafka `acks=1` acknowledges once the leader appended to its log "
                + "(page cache; Kafka's default flush policy never fsyncs on append). Neither survives a power loss; both "
                + "survive the broker process's death.");
        notes.add("Sluice `perf-produce " + String.join(" ", SLUICE_PRODUCE) + "`; Kafka `ProducerPerformance --throughput -1 "
                + "--producer-props " + String.join(" ", KAFKA_PRODUCE) + "` (Kafka's JVM flags from its start scripts: "
                + String.join(" ", KAFKA_JVM.subList(0, 6)) + "). Produce latency: each record's send call to its "
                + "acknowledgement, on both sides (Kafka's tool reports whole milliseconds); both clients hold up to 32 MiB of "
                + "records not yet acknowledged (their default buffer memory), so at an unlimited rate it is mostly time "
                + "queued in the client. Both clocks start before the client connects (perf-produce without a warm-up; "
                + "ProducerPerformance's first send connects inside its clock) and stop at the last acknowledgement.");
        notes.add("Sluice `perf-consume " + String.join(" ", SLUICE_CONSUME) + "` against a broker started with `"
                + String.join(" ", SLUICE_BROKER) + "` (assigned all partitions, from the first "
                + "offset; its clock runs from the first poll, consumer built and partitions assigned, to the poll that returned "
                + "the last record: construction, the metadata read and close() are outside it, as in Kafka's tool); Kafka "
                + "`ConsumerPerformance --fetch-size "
                + KAFKA_FETCH_SIZE + "` with `" + String.join(" ", KAFKA_CONSUME) + "`, a new group each run, from the "
                + "earliest offset; its rate is `fetch.nMsg.sec`, which leaves out the group join.");
        notes.add("Same client (issue 23): the same Sluice broker also listens with `--kafka-port` (Sluice's Kafka "
                + "listener); each round runs Kafka's `ProducerPerformance` (then, in the consume rounds, "
                + "`ConsumerPerformance`) against it too, with exactly the Kafka column's command line, into its own topic `"
                + LISTENER_TOPIC + "` (" + PARTITIONS + " partitions, created like `" + TOPIC + "`). The Kafka column of the "
                + "same-client table is the Kafka column's runs of the two tables after it: one Kafka run per round, "
                + "three runs per round in the order Sluice client, Kafka, Kafka tools → Sluice. Goals: produce ≥ "
                + Numbers.format(SameClientTable.PRODUCE_GOAL) + "× Kafka, consume ≥ "
                + Numbers.format(SameClientTable.CONSUME_GOAL) + "× Kafka, both with Kafka's own tools; Sluice's own "
                + "client's median for the same rounds is in each row's note. Durability of acks=1 on Sluice's listener: "
                + "the journal (no fsync), as `perf-produce --acks journal`.");
        notes.add("CPU seconds per million records = (user + system CPU of the broker JVM during the run, from "
                + "/proc/<pid>/stat: utime + stime) "
                + "and (user + system CPU of the load tool's JVM, start-up included, from bash's `times`), each divided by "
                + "the records of the run.");
        return new ScenarioResult(name(), title(), reference(), tables, List.of(), notes, 0);
    }

    /** Null when the launcher jar, its JVM options and Kafka's class path file are present; else what is missing. */
    static String missingArtifacts() {
        List<String> missing = new ArrayList<>();
        for (Path p : List.of(SLUICE_JAR, SLUICE_JVMOPTS, KAFKA_CLASSPATH)) {
            if (!Files.isRegularFile(p)) {
                missing.add(p.toString());
            }
        }
        return missing.isEmpty() ? null : String.join(", ", missing) + " missing (build them: " + BUILD_HINT + ")";
    }

    // ---- brokers ----

    private static PeerBroker startSluice(Path dir, int port, int kafkaPort) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(java()));
        cmd.addAll(BROKER_HEAP);
        cmd.add("-XX:+UseG1GC");
        cmd.add("@" + SLUICE_JVMOPTS.toAbsolutePath());
        cmd.addAll(List.of("-jar", SLUICE_JAR.toAbsolutePath().toString(), "broker",
                "--data-dir", dir.resolve("data").toString(), "--port", Integer.toString(port), "--http-port", "0",
                "--kafka-port", Integer.toString(kafkaPort)));
        cmd.addAll(SLUICE_BROKER);
        return PeerBroker.start("sluice", cmd, dir);
    }

    private static PeerBroker startKafka(Path dir, String classPath, int port, int controllerPort)
            throws IOException, InterruptedException {
        String props = """
                process.roles=broker,controller
                node.id=1
                controller.quorum.voters=1@127.0.0.1:%2$d
                listeners=PLAINTEXT://127.0.0.1:%1$d,CONTROLLER://127.0.0.1:%2$d
                advertised.listeners=PLAINTEXT://127.0.0.1:%1$d
                controller.listener.names=CONTROLLER
                inter.broker.listener.name=PLAINTEXT
                listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
                log.dirs=%3$s
                num.partitions=%4$d
                default.replication.factor=1
                min.insync.replicas=1
                offsets.topic.replication.factor=1
                offsets.topic.num.partitions=1
                transaction.state.log.replication.factor=1
                transaction.state.log.min.isr=1
                share.coordinator.state.topic.replication.factor=1
                share.coordinator.state.topic.min.isr=1
                group.initial.rebalance.delay.ms=0
                auto.create.topics.enable=false
                """.formatted(port, controllerPort, dir.resolve("data").toAbsolutePath(), PARTITIONS);
        Path config = dir.resolve("server.properties");
        Files.writeString(config, props, StandardCharsets.UTF_8);
        List<String> format = kafkaJava(classPath, List.of("-Xmx256m"), "kafka.tools.StorageTool");
        format.addAll(List.of("format", "-t", clusterId(), "-c", config.toAbsolutePath().toString()));
        ToolRun f = ToolRun.run("kafka-storage-format", format, dir, Duration.ofSeconds(120));
        if (f.exitCode() != 0) {
            throw new IllegalStateException("kafka-storage format exited with " + f.exitCode() + ":\n" + f.stdout()
                    + ToolRun.tail(dir.resolve("kafka-storage-format.err")));
        }
        List<String> cmd = kafkaJava(classPath, BROKER_HEAP, "kafka.Kafka");
        cmd.add(config.toAbsolutePath().toString());
        return PeerBroker.start("kafka", cmd, dir);
    }

    /** A random cluster id as {@code kafka-storage random-uuid} prints it (never starting with '-'). */
    private static String clusterId() {
        String s;
        do {
            UUID u = UUID.randomUUID();
            byte[] b = java.nio.ByteBuffer.allocate(16).putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits()).array();
            s = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(b);
        } while (s.startsWith("-"));
        return s;
    }

    private static void createSluiceTopic(PeerBroker broker, String bootstrap, String topic) throws InterruptedException {
        long deadline = System.nanoTime() + START_DEADLINE.toNanos();
        SluiceException last = null;
        while (System.nanoTime() < deadline) {
            broker.checkAlive();
            try (RemoteAdmin admin = new RemoteAdmin(ClientConfig.of(bootstrap))) {
                admin.createTopicIfAbsent(TopicConfig.of(topic, PARTITIONS));
                return;
            } catch (SluiceException e) {
                last = e;
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
        throw new IllegalStateException("Sluice broker on " + bootstrap + " not ready after " + START_DEADLINE + " (" + last
                + "); its log ends with:\n" + broker.logTail());
    }

    private static void createKafkaTopic(PeerBroker broker, String bootstrap) throws InterruptedException {
        long deadline = System.nanoTime() + START_DEADLINE.toNanos();
        Exception last = null;
        // the admin client logs a warning for each refused connection: wait for the listener first
        while (!accepts(bootstrap)) {
            broker.checkAlive();
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("Kafka broker does not listen on " + bootstrap + " after " + START_DEADLINE
                        + "; its log ends with:\n" + broker.logTail());
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000, AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000))) {
            boolean created = false;
            while (System.nanoTime() < deadline) {
                broker.checkAlive();
                try {
                    if (!created) {
                        admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get(15, TimeUnit.SECONDS);
                        created = true;
                    }
                    TopicDescription d = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(15, TimeUnit.SECONDS).get(TOPIC);
                    if (d.partitions().size() == PARTITIONS && d.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty())) {
                        return;
                    }
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof TopicExistsException) {
                        created = true;
                    } else {
                        last = e;
                    }
                } catch (java.util.concurrent.TimeoutException e) {
                    last = e;
                }
                TimeUnit.MILLISECONDS.sleep(200);
            }
        }
        throw new IllegalStateException("Kafka broker on " + bootstrap + " not ready after " + START_DEADLINE + " (" + last
                + "); its log ends with:\n" + broker.logTail());
    }

    // ---- load tools ----

    private Measured sluiceProduce(PeerBroker broker, String bootstrap, long records, Path dir, int round, Duration deadline)
            throws IOException, InterruptedException {
        List<String> cmd = sluiceJava("perf-produce");
        cmd.addAll(List.of("--bootstrap", bootstrap, "--topic", TOPIC, "--records", Long.toString(records),
                "--record-size", Integer.toString(RECORD_SIZE)));
        cmd.addAll(SLUICE_PRODUCE);
        double before = broker.cpuSeconds();
        ToolRun r = ToolRun.run("sluice-produce-" + round, cmd, dir, deadline);
        double brokerCpu = broker.cpuSeconds() - before;
        JsonNode j = sluiceSummary(r, "sluice-produce-" + round, dir);
        long acked = j.path("records_acknowledged").asLong();
        if (r.exitCode() != 0 || acked != records || j.path("errors").asLong() != 0) {
            throw new IllegalStateException("Sluice perf-produce run " + round + ": " + acked + " of " + records
                    + " acknowledged, exit " + r.exitCode() + ", first error " + j.path("first_error"));
        }
        JsonNode lat = j.path("latency_us");
        return new Measured(records, j.path("records_per_second").asDouble(), lat.path("p50").asDouble() / 1000,
                lat.path("p99").asDouble() / 1000, brokerCpu, r.cpuSeconds());
    }

    private Measured sluiceConsume(PeerBroker broker, String bootstrap, long records, Path dir, int round, Duration deadline)
            throws IOException, InterruptedException {
        List<String> cmd = sluiceJava("perf-consume");
        cmd.addAll(List.of("--bootstrap", bootstrap, "--topic", TOPIC, "--records", Long.toString(records)));
        cmd.addAll(SLUICE_CONSUME);
        double before = broker.cpuSeconds();
        ToolRun r = ToolRun.run("sluice-consume-" + round, cmd, dir, deadline);
        double brokerCpu = broker.cpuSeconds() - before;
        JsonNode j = sluiceSummary(r, "sluice-consume-" + round, dir);
        long received = j.path("records_acknowledged").asLong();
        if (r.exitCode() != 0 || received < records) {
            throw new IllegalStateException("Sluice perf-consume run " + round + ": " + received + " of " + records
                    + " received, exit " + r.exitCode() + ", first error " + j.path("first_error"));
        }
        return new Measured(records, j.path("records_per_second").asDouble(), Double.NaN, Double.NaN, brokerCpu, r.cpuSeconds());
    }

    /** ProducerPerformance against {@code broker} (Kafka, or Sluice's Kafka listener), its output named {@code label}. */
    private Measured kafkaProduce(PeerBroker broker, String classPath, String bootstrap, String topic, String label,
                                  long records, Path dir, Duration deadline) throws IOException, InterruptedException {
        List<String> cmd = kafkaJava(classPath, TOOL_HEAP, "org.apache.kafka.tools.ProducerPerformance");
        cmd.addAll(List.of("--topic", topic, "--num-records", Long.toString(records), "--record-size",
                Integer.toString(RECORD_SIZE), "--throughput", "-1", "--producer-props", "bootstrap.servers=" + bootstrap));
        cmd.addAll(KAFKA_PRODUCE);
        double before = broker.cpuSeconds();
        ToolRun r = ToolRun.run(label, cmd, dir, deadline);
        double brokerCpu = broker.cpuSeconds() - before;
        ProducerSummary m = ProducerSummary.parse(r.stdout());
        if (r.exitCode() != 0 || m == null || m.records() != records) {
            throw new IllegalStateException("ProducerPerformance run " + label + " exited with " + r.exitCode()
                    + " without a summary of " + records + " records; stdout ends with:\n" + tailOf(r.stdout())
                    + "\nstderr:\n" + ToolRun.tail(dir.resolve(label + ".err")));
        }
        return new Measured(records, m.perSecond(), m.p50Millis(), m.p99Millis(), brokerCpu, r.cpuSeconds());
    }

    /** ProducerPerformance's final summary line: records sent, records/s, and the P50 and P99 latencies (ms). */
    record ProducerSummary(long records, double perSecond, double p50Millis, double p99Millis) {
        /** The last summary line of the tool's output (progress lines have no percentiles), or null when there is none. */
        static ProducerSummary parse(String stdout) {
            ProducerSummary last = null;
            for (String line : stdout.split("\n")) {
                Matcher m = KAFKA_PRODUCE_SUMMARY.matcher(line);
                if (m.find()) {
                    last = new ProducerSummary(Long.parseLong(m.group(1)), Double.parseDouble(m.group(2)),
                            Double.parseDouble(m.group(6)), Double.parseDouble(m.group(8)));
                }
            }
            return last;
        }
    }

    /** ConsumerPerformance against {@code broker} (Kafka, or Sluice's Kafka listener), its output named {@code label}. */
    private Measured kafkaConsume(PeerBroker broker, String classPath, String bootstrap, String topic, String label,
                                  long records, Path dir, Duration deadline) throws IOException, InterruptedException {
        Path config = dir.resolve("kafka-consumer.properties");
        Files.writeString(config, String.join("\n", KAFKA_CONSUME) + "\n", StandardCharsets.UTF_8);
        List<String> cmd = kafkaJava(classPath, TOOL_HEAP, "org.apache.kafka.tools.ConsumerPerformance");
        cmd.addAll(List.of("--bootstrap-server", bootstrap, "--topic", topic, "--messages", Long.toString(records),
                "--group", "sluice-bench-" + label + "-" + UUID.randomUUID(), "--fetch-size", Integer.toString(KAFKA_FETCH_SIZE),
                "--consumer.config", config.toAbsolutePath().toString(), "--timeout", "30000"));
        double before = broker.cpuSeconds();
        ToolRun r = ToolRun.run(label, cmd, dir, deadline);
        double brokerCpu = broker.cpuSeconds() - before;
        Map<String, String> row = consumerPerformanceRow(r.stdout());
        long consumed = row == null ? -1 : Long.parseLong(row.getOrDefault("data.consumed.in.nMsg", "-1"));
        if (r.exitCode() != 0 || consumed < records || !row.containsKey("fetch.nMsg.sec")) {
            throw new IllegalStateException("ConsumerPerformance run " + label + ": " + consumed + " of " + records
                    + " consumed, exit " + r.exitCode() + "; stdout ends with:\n" + tailOf(r.stdout()) + "\nstderr:\n"
                    + ToolRun.tail(dir.resolve(label + ".err")));
        }
        return new Measured(records, Double.parseDouble(row.get("fetch.nMsg.sec")), Double.NaN, Double.NaN, brokerCpu, r.cpuSeconds());
    }

    /** ConsumerPerformance's header line and the data line under it, as name → value; null when absent. */
    static Map<String, String> consumerPerformanceRow(String stdout) {
        String[] lines = stdout.split("\n");
        for (int i = 0; i + 1 < lines.length; i++) {
            if (lines[i].startsWith("start.time")) {
                String[] names = lines[i].trim().split(",\\s*");
                String[] values = lines[i + 1].trim().split(",\\s*");
                if (names.length != values.length) {
                    return null;
                }
                Map<String, String> row = new java.util.LinkedHashMap<>();
                for (int c = 0; c < names.length; c++) {
                    row.put(names[c], values[c]);
                }
                return row;
            }
        }
        return null;
    }

    private static JsonNode sluiceSummary(ToolRun r, String name, Path dir) throws IOException {
        String last = null;
        for (String line : r.stdout().split("\n")) {
            if (line.startsWith("{\"tool\"")) {
                last = line;
            }
        }
        if (last == null) {
            throw new IllegalStateException(name + " exited with " + r.exitCode() + " without its JSON line; stdout ends with:\n"
                    + tailOf(r.stdout()) + "\nstderr:\n" + ToolRun.tail(dir.resolve(name + ".err")));
        }
        return JSON.readTree(last);
    }

    private static String tailOf(String s) {
        String[] lines = s.split("\n");
        return String.join("\n", java.util.Arrays.asList(lines).subList(Math.max(0, lines.length - 10), lines.length));
    }

    private static List<String> sluiceJava(String command) {
        List<String> cmd = new ArrayList<>(List.of(java()));
        cmd.addAll(TOOL_HEAP);
        cmd.add("-XX:+UseG1GC");
        cmd.add("@" + SLUICE_JVMOPTS.toAbsolutePath());
        cmd.addAll(List.of("-jar", SLUICE_JAR.toAbsolutePath().toString(), command));
        return cmd;
    }

    private static List<String> kafkaJava(String classPath, List<String> heap, String mainClass) {
        List<String> cmd = new ArrayList<>(List.of(java()));
        cmd.addAll(heap);
        cmd.addAll(KAFKA_JVM);
        cmd.addAll(List.of("-cp", classPath, mainClass));
        return cmd;
    }

    private static String java() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static boolean accepts(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        try (java.net.Socket socket = new java.net.Socket()) {
            socket.connect(new java.net.InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1))), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    // ---- tables ----

    static Sample sample(List<Measured> runs, ToDoubleFunction<Measured> f) {
        List<Double> v = new ArrayList<>();
        for (Measured m : runs) {
            v.add(f.applyAsDouble(m));
        }
        return Sample.of(v);
    }

    private static String perRun(List<Measured> runs, ToDoubleFunction<Measured> f) {
        List<String> v = new ArrayList<>();
        for (Measured m : runs) {
            v.add(Numbers.format(f.applyAsDouble(m)));
        }
        return String.join(", ", v);
    }

    /** "runs: Sluice a, b, c; Kafka d, e, f" plus Sluice's median over Kafka's, for the note column. */
    static String compare(List<Measured> s, List<Measured> k, ToDoubleFunction<Measured> f, Better better) {
        double sm = sample(s, f).median();
        double km = sample(k, f).median();
        String ratio = sm == 0 || km == 0 ? "" : (better == Better.HIGHER
                ? "Sluice " + Numbers.format(sm / km) + "× Kafka's rate"
                : "Sluice " + Numbers.format(sm / km) + "× Kafka's figure (lower is better)") + "; ";
        return ratio + "runs: Sluice " + perRun(s, f) + "; Kafka " + perRun(k, f);
    }

    static Table produceTable(long records, List<Measured> s, List<Measured> k) {
        Table.Builder t = Table.builder(String.format(Locale.ROOT,
                        "Network produce, %,d × %d B into %d partitions, one client: Sluice acks=journal vs Kafka acks=1",
                        records, RECORD_SIZE, PARTITIONS),
                "Kafka " + KAFKA_VERSION + " ProducerPerformance, same run (" + String.join(", ", KAFKA_PRODUCE) + ")");
        t.row(new Row("throughput", "rec/s", Better.HIGHER, sample(s, Measured::perSecond), sample(k, Measured::perSecond), null,
                compare(s, k, Measured::perSecond, Better.HIGHER))
                .withGoal(Goal.timesBaseline(2.5)).withGoal(Goal.absolute(1_500_000)));
        t.row("send → acknowledgement P50", "ms", Better.LOWER, sample(s, Measured::p50Millis), sample(k, Measured::p50Millis),
                null, compare(s, k, Measured::p50Millis, Better.LOWER));
        t.row("send → acknowledgement P99", "ms", Better.LOWER, sample(s, Measured::p99Millis), sample(k, Measured::p99Millis),
                null, compare(s, k, Measured::p99Millis, Better.LOWER));
        cpuRows(t, s, k);
        return t.build();
    }

    static Table consumeTable(long records, List<Measured> s, List<Measured> k) {
        Table.Builder t = Table.builder(String.format(Locale.ROOT,
                        "Network consume, %,d × %d B from the first offset of %d partitions, one consumer", records, RECORD_SIZE,
                        PARTITIONS),
                "Kafka " + KAFKA_VERSION + " ConsumerPerformance, same run (fetch.nMsg.sec)");
        t.row(new Row("throughput", "rec/s", Better.HIGHER, sample(s, Measured::perSecond), sample(k, Measured::perSecond), null,
                compare(s, k, Measured::perSecond, Better.HIGHER)).withGoal(Goal.timesBaseline(2)));
        cpuRows(t, s, k);
        return t.build();
    }

    private static void cpuRows(Table.Builder t, List<Measured> s, List<Measured> k) {
        t.row("CPU, broker (user + sys)", "s per M records", Better.LOWER, sample(s, Measured::brokerCpuPerMillion),
                sample(k, Measured::brokerCpuPerMillion), null, compare(s, k, Measured::brokerCpuPerMillion, Better.LOWER));
        t.row("CPU, load tool (user + sys, JVM start-up included)", "s per M records", Better.LOWER,
                sample(s, Measured::toolCpuPerMillion), sample(k, Measured::toolCpuPerMillion), null,
                compare(s, k, Measured::toolCpuPerMillion, Better.LOWER));
    }
}
