package io.sluice.faults;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.TopicConfig;
import io.sluice.testkit.ClickHouseCluster;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.FaultProxy;
import io.sluice.testkit.RedisServer;
import io.sluice.testkit.ZooKeeperServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The real processes of a run: a private ClickHouse behind a {@link FaultProxy}, a private Redis behind a raw TCP
 * proxy (when {@code worker-pool} is in the run), a second private ClickHouse with its private ZooKeeper behind its
 * own {@link FaultProxy} (when {@code replicated} is in the run: the offset-range strategy into a
 * {@code ReplicatedMergeTree}, exactly-once through replicated block deduplication and, after an INSERT of
 * unknown status, a look at what landed in parts registered in ZooKeeper), {@code sluice broker} with an
 * {@code ingest.<name>.*} section per broker-side strategy (and its Kafka listener when the run has Kafka clients), and a {@code sluice ingest} process for the journal
 * strategy. Every ingest pipeline talks to ClickHouse and Redis through the proxies; the checker queries each
 * table's ClickHouse directly.
 *
 * <p>The broker's journal lives on a 512 MiB tmpfs when the run is root and {@link FaultKind#DISK_FULL} is enabled
 * (mounted here, unmounted by {@link #close()}).
 */
public final class Cluster implements AutoCloseable {
    public static final String TOPIC = "events";

    /** A ClickHouse table fed by one strategy, the server it lives on, and what the docs promise for it. */
    public record Table(String strategy, String name, boolean exactlyOnce, ClickHouseServer server) {
    }

    private final TortureConfig config;
    private final ClickHouseServer clickHouse;
    private final RedisServer redis;
    private final FaultProxy clickHouseProxy;
    private final FaultProxy redisProxy;
    private final ClickHouseServer replicated;
    private final FaultProxy replicatedProxy;
    private final Node broker;
    private final Node ingest;
    /** The journal strategy's ClickHouse and the proxy its {@code sluice ingest} talks through, or null. */
    private final ClickHouseServer journalServer;
    private final FaultProxy journalProxy;
    /** With a journal shard ({@link #Cluster(TortureConfig, ClickHouseCluster)}): one proxy per replica, in order. */
    private final List<FaultProxy> journalReplicaProxies = new ArrayList<>();
    private final List<Table> tables = new ArrayList<>();
    private final Path dataDir;
    private final boolean tmpfs;
    private final int port;
    private final int httpPort;
    private final int kafkaPort;

    public Cluster(TortureConfig config) {
        this(config, false);
    }

    /**
     * @param journalOnReplicated the {@code journal} strategy's table is a {@code ReplicatedMergeTree} on the second
     *                            private ClickHouse with its own ZooKeeper (behind {@link #journalProxy()}) instead of
     *                            a {@code MergeTree} on the shared one
     */
    Cluster(TortureConfig config, boolean journalOnReplicated) {
        this(config, journalOnReplicated, null);
    }

    /**
     * The {@code journal} strategy's table is the local {@code ReplicatedMergeTree} table on every replica of the one
     * shard of {@code journalShard} (its own ZooKeeper), and {@code sluice ingest} writes to it as a cluster target
     * ({@code clickhouse.shards}), through one {@link FaultProxy} per replica ({@link #journalReplicaProxies()});
     * {@link #journalServer()} is the shard's first replica.
     */
    Cluster(TortureConfig config, ClickHouseCluster journalShard) {
        this(config, false, journalShard);
    }

    private Cluster(TortureConfig config, boolean journalOnReplicated, ClickHouseCluster journalShard) {
        this.config = config;
        Path run = config.runDir();
        this.clickHouse = ClickHouseServer.shared();
        String db = clickHouse.createDatabase("torture");
        this.clickHouseProxy = FaultProxy.forUrl(clickHouse.url());
        if (config.has("worker-pool")) {
            this.redis = RedisServer.shared();
            URI u = URI.create(redis.url());
            this.redisProxy = FaultProxy.tcp(u.getHost(), u.getPort());
        } else {
            this.redis = null;
            this.redisProxy = null;
        }
        if ((config.has("replicated") || journalOnReplicated && config.has("journal")) && clickHouse.isPrivate()) {
            this.replicated = ClickHouseServer.replicated(); // starts the shared private ZooKeeper first
            this.replicatedProxy = FaultProxy.forUrl(replicated.url());
        } else {
            this.replicated = null;
            this.replicatedProxy = null;
        }
        this.dataDir = run.resolve("broker-data");
        this.tmpfs = config.faults().contains(FaultKind.DISK_FULL) && mountTmpfs(dataDir);
        this.port = freePort();
        this.httpPort = freePort();
        this.kafkaPort = config.kafkaMembers() > 0 ? freePort() : -1;
        try (Broker setup = Broker.open(BrokerConfig.builder(dataDir).build())) {
            setup.createTopic(TopicConfig.of(TOPIC, config.partitions()));
            if (kafkaPort > 0) {
                setup.createTopic(TopicConfig.of(KafkaWorkload.TOPIC, config.partitions()));
            }
        }

        Map<String, String> props = new LinkedHashMap<>();
        props.put("data.dir", dataDir.toString());
        props.put("port", Integer.toString(port));
        props.put("http.port", Integer.toString(httpPort));
        if (kafkaPort > 0) {
            // the Kafka listener of the same broker process: killed, paused and restarted with it
            props.put("kafka.port", Integer.toString(kafkaPort));
            props.put("kafka.advertised.host", "127.0.0.1");
        }
        if (config.has("coalescing")) {
            String t = db + ".coalescing";
            clickHouse.execute("CREATE TABLE " + t + " (id UInt64, p UInt32) ENGINE = MergeTree ORDER BY id");
            tables.add(new Table("coalescing", t, false, clickHouse));
            section(props, "co", t, "coalescing");
        }
        if (config.has("worker-pool")) {
            String t = db + ".worker_pool";
            clickHouse.execute("CREATE TABLE " + t + " (id UInt64, p UInt32, _sluice_entry String, _sluice_index UInt32)"
                    + " ENGINE = MergeTree ORDER BY (_sluice_entry, _sluice_index)");
            // at-least-once end to end: the entry columns make rows exactly-once per stream entry, but an event the
            // topic ingestor re-sends after a failed XADD (Redis killed, cut or stalled) is a new entry
            tables.add(new Table("worker-pool", t, false, clickHouse));
            section(props, "wp", t, "worker-pool");
            props.put("ingest.wp.redis.url", "redis://127.0.0.1:" + redisProxy.port());
            props.put("ingest.wp.redis.stream", "torture-" + db);
            props.put("ingest.wp.workers", "2");
            props.put("ingest.wp.redis.claim.idle.ms", Long.toString(Math.max(5_000, 3 * config.insertTimeoutMillis())));
        }
        if (replicated != null && config.has("replicated")) {
            String t = replicated.createDatabase("torture") + ".replicated";
            replicated.execute("CREATE TABLE " + t + " (id UInt64, p UInt32, _sluice_partition UInt32, _sluice_offset UInt64)"
                    + " ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/" + t + "', '{replica}')"
                    + " ORDER BY (_sluice_partition, _sluice_offset)");
            // block deduplication drops an identical retried block; after an INSERT of unknown status (319 when
            // ZooKeeper went away mid-insert: seed 20261123 of FaultInjectionSuiteTest once found 6 rows twice) the
            // pipeline first finds out what landed in parts registered in ZooKeeper (ReplicatedLanding): exactly-once
            tables.add(new Table("replicated", t, true, replicated));
            section(props, "rep", t, "offset-range");
            props.put("ingest.rep.clickhouse.url", replicatedProxy.url());
        }
        Path brokerConfig = run.resolve("broker.properties");
        StringBuilder sb = new StringBuilder();
        props.forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
        try {
            Files.writeString(brokerConfig, sb.toString(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.broker = new Node("broker", run, "512m", Map.of(), "sluice broker: binary protocol on",
                "broker", "--config", brokerConfig.toString());

        if (config.has("journal") && journalShard != null) {
            String t = "torture_shard.journal";
            journalShard.onEveryNode("CREATE DATABASE IF NOT EXISTS torture_shard");
            journalShard.onEveryNode("CREATE TABLE " + t + " (id UInt64, p UInt32, _sluice_partition UInt32, _sluice_offset UInt64)"
                    + " ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/" + t + "', '{replica}')"
                    + " ORDER BY (_sluice_partition, _sluice_offset)");
            List<String> urls = new ArrayList<>();
            for (String url : journalShard.shardUrls().get(0)) {
                FaultProxy proxy = FaultProxy.forUrl(url);
                journalReplicaProxies.add(proxy);
                urls.add(proxy.url());
            }
            this.journalServer = journalShard.node(1, 1);
            this.journalProxy = journalReplicaProxies.get(0);
            tables.add(new Table("journal", t, true, journalServer));
            this.ingest = new Node("ingest", run, "256m", config.ingestEnv(), "sluice ingest: IngestConfig[",
                    "ingest", "--bootstrap", bootstrap(), "--topic", TOPIC, "--clickhouse", urls.get(0),
                    "--table", t, "--strategy", "journal", "--batch-rows", "500", "--linger-ms", "50",
                    "--group", "ingest-journal", "--metrics-interval-s", "0",
                    "--set", "clickhouse.shards=" + String.join(",", urls),
                    "--set", "clickhouse.zookeeper.session.timeout.ms=" + ClickHouseCluster.ZOOKEEPER_SESSION_TIMEOUT_MS,
                    "--set", "insert.timeout.ms=" + config.insertTimeoutMillis(),
                    "--set", "retry.max.ms=2000");
        } else if (config.has("journal")) {
            boolean onReplicated = journalOnReplicated && replicated != null;
            this.journalServer = onReplicated ? replicated : clickHouse;
            this.journalProxy = onReplicated ? replicatedProxy : clickHouseProxy;
            String t = (onReplicated ? replicated.createDatabase("torture") : db) + ".journal";
            journalServer.execute("CREATE TABLE " + t + " (id UInt64, p UInt32, _sluice_partition UInt32, _sluice_offset UInt64)"
                    + (onReplicated ? " ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/" + t + "', '{replica}')"
                    : " ENGINE = MergeTree") + " ORDER BY (_sluice_partition, _sluice_offset)");
            tables.add(new Table("journal", t, true, journalServer));
            this.ingest = new Node("ingest", run, "256m", config.ingestEnv(), "sluice ingest: IngestConfig[",
                    "ingest", "--bootstrap", bootstrap(), "--topic", TOPIC, "--clickhouse", journalProxy.url(),
                    "--table", t, "--strategy", "journal", "--batch-rows", "500", "--linger-ms", "50",
                    "--group", "ingest-journal", "--metrics-interval-s", "0",
                    "--set", "insert.timeout.ms=" + config.insertTimeoutMillis(),
                    "--set", "retry.max.ms=2000");
        } else {
            this.ingest = null;
            this.journalServer = null;
            this.journalProxy = null;
        }
    }

    private void section(Map<String, String> props, String name, String table, String strategy) {
        String p = "ingest." + name + ".";
        props.put(p + "topic", TOPIC);
        props.put(p + "clickhouse.url", clickHouseProxy.url());
        props.put(p + "table", table);
        props.put(p + "strategy", strategy);
        props.put(p + "group", "ingest-" + name);
        props.put(p + "batch.rows", "500");
        props.put(p + "linger.ms", "50");
        props.put(p + "insert.timeout.ms", Long.toString(config.insertTimeoutMillis()));
        props.put(p + "retry.max.ms", "2000");
    }

    /** Starts the broker, then the ingest process. */
    public void start() {
        broker.start(5);
        if (ingest != null) {
            ingest.start(5);
        }
    }

    /** "broker 2, ingest 0": how often each process exited before it was ready (each was tried again). */
    public String failedStarts() {
        return "broker " + broker.failedStarts() + (ingest == null ? "" : ", ingest " + ingest.failedStarts());
    }

    public String bootstrap() {
        return "127.0.0.1:" + port;
    }

    /** The broker's Kafka listener ({@code host:port}), or null when the run has no Kafka clients. */
    public String kafkaBootstrap() {
        return kafkaPort > 0 ? "127.0.0.1:" + kafkaPort : null;
    }

    public int httpPort() {
        return httpPort;
    }

    public Node broker() {
        return broker;
    }

    /** The {@code sluice ingest} process, or null when the journal strategy is not in the run. */
    public Node ingest() {
        return ingest;
    }

    /** The ClickHouse holding the journal strategy's table (null without {@code journal}). */
    public ClickHouseServer journalServer() {
        return journalServer;
    }

    /** The proxy the journal strategy's {@code sluice ingest} inserts through (null without {@code journal}). */
    public FaultProxy journalProxy() {
        return journalProxy;
    }

    public ClickHouseServer clickHouse() {
        return clickHouse;
    }

    public RedisServer redis() {
        return redis;
    }

    public FaultProxy clickHouseProxy() {
        return clickHouseProxy;
    }

    /** The proxies in front of every ClickHouse of the run (the shared one first). */
    public List<FaultProxy> clickHouseProxies() {
        List<FaultProxy> out = new ArrayList<>();
        out.add(clickHouseProxy);
        if (replicatedProxy != null) {
            out.add(replicatedProxy);
        }
        out.addAll(journalReplicaProxies);
        return out;
    }

    /** The proxies of the journal shard's replicas, in configuration order (empty without a journal shard). */
    public List<FaultProxy> journalReplicaProxies() {
        return List.copyOf(journalReplicaProxies);
    }

    /** The ZooKeeper of the replicated ClickHouse, or null when {@code replicated} is not in the run. */
    public ZooKeeperServer zooKeeper() {
        return replicated == null ? null : ZooKeeperServer.shared();
    }

    public FaultProxy redisProxy() {
        return redisProxy;
    }

    public List<Table> tables() {
        return List.copyOf(tables);
    }

    public Path dataDir() {
        return dataDir;
    }

    public boolean onTmpfs() {
        return tmpfs;
    }

    /**
     * Ends every fault: proxies pass, paused processes continue, dead ones are restarted (ClickHouse and Redis
     * first, then the broker, then the ingest process). Returns what had to be restarted.
     */
    public List<String> heal() {
        List<String> restarted = new ArrayList<>();
        clickHouseProxies().forEach(FaultProxy::heal);
        if (replicated != null) {
            ZooKeeperServer zk = ZooKeeperServer.shared();
            zk.resume();
            if (!zk.isRunning()) {
                zk.start();
                restarted.add("zookeeper");
            }
        }
        if (redisProxy != null) {
            redisProxy.heal();
        }
        if (clickHouse.isPrivate()) {
            clickHouse.resume();
            if (!clickHouse.isRunning()) {
                clickHouse.start();
                restarted.add("clickhouse");
            }
        }
        if (redis != null && redis.isPrivate()) {
            redis.resume();
            if (redis.pid() < 0) {
                redis.start();
                restarted.add("redis");
            }
        }
        if (broker.ensureRunning()) {
            restarted.add("broker");
        }
        if (ingest != null && ingest.ensureRunning()) {
            restarted.add("ingest");
        }
        return restarted;
    }

    @Override
    public void close() {
        if (ingest != null) {
            ingest.close();
        }
        broker.close();
        clickHouseProxies().forEach(FaultProxy::close);
        if (redisProxy != null) {
            redisProxy.close();
        }
        if (tmpfs) {
            run("umount", "-l", dataDir.toString());
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean mountTmpfs(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return run("mount", "-t", "tmpfs", "-o", "size=512m", "tmpfs", dir.toString());
    }

    static boolean run(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
