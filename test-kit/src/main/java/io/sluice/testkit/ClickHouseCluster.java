package io.sluice.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A ClickHouse cluster for tests: {@code shards × replicas} private {@code clickhouse-server} processes on loopback
 * with its own private ZooKeeper ({@link ZooKeeperServer}'s process). Each node's config (written here) carries the ZooKeeper address,
 * {@code remote_servers} with the cluster {@value #CLUSTER} (every shard with {@code internal_replication}, so a
 * {@code Distributed} table writes to one replica and replication copies it), {@code macros} {@code {shard}} and
 * {@code {replica}} for {@code ReplicatedMergeTree} paths, and an interserver port for replica fetches.
 *
 * <pre>{@code
 * try (ClickHouseCluster cluster = ClickHouseCluster.start(2, 2)) {
 *     cluster.onEveryNode("CREATE TABLE db.t_local (...) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/t', '{replica}') ...");
 *     cluster.node(1, 2).kill(); ...
 * }
 * }</pre>
 *
 * Nodes can be stopped, killed and started again with the same ports and data. Start-up is parallel; on two cores a
 * 2×2 cluster takes a few seconds. Share one per test class.
 */
public final class ClickHouseCluster implements AutoCloseable {
    public static final String CLUSTER = "sluice_cluster";
    /** The nodes' ZooKeeper {@code session_timeout_ms} (Sluice's {@code clickhouse.zookeeper.session.timeout.ms}). */
    public static final int ZOOKEEPER_SESSION_TIMEOUT_MS = 6000;

    private final ZooKeeperServer.Process zooKeeper;
    private final List<List<ClickHouseServer.Process>> processes;
    private final List<List<ClickHouseServer>> nodes;

    private ClickHouseCluster(ZooKeeperServer.Process zooKeeper, List<List<ClickHouseServer.Process>> processes) {
        this.zooKeeper = zooKeeper;
        this.processes = processes;
        this.nodes = processes.stream().map(shard -> shard.stream()
                .map(p -> new ClickHouseServer("http://127.0.0.1:" + p.httpPort, p)).toList()).toList();
    }

    /** Starts ZooKeeper and {@code shards × replicas} ClickHouse nodes and waits until each answers. */
    public static ClickHouseCluster start(int shards, int replicas) {
        ZooKeeperServer.Process zk = new ZooKeeperServer.Process(); // the cluster's own, not the JVM-wide shared one
        zk.start();
        List<List<ClickHouseServer.Process>> processes = new ArrayList<>();
        for (int s = 1; s <= shards; s++) {
            List<ClickHouseServer.Process> shard = new ArrayList<>();
            for (int r = 1; r <= replicas; r++) {
                shard.add(new ClickHouseServer.Process("clickhouse-s" + s + "r" + r));
            }
            processes.add(shard);
        }
        StringBuilder remote = new StringBuilder("<remote_servers><" + CLUSTER + ">");
        for (List<ClickHouseServer.Process> shard : processes) {
            remote.append("<shard><internal_replication>true</internal_replication>");
            for (ClickHouseServer.Process p : shard) {
                remote.append("<replica><host>127.0.0.1</host><port>").append(p.tcpPort).append("</port></replica>");
            }
            remote.append("</shard>");
        }
        remote.append("</").append(CLUSTER).append("></remote_servers>");
        for (int s = 0; s < shards; s++) {
            for (int r = 0; r < replicas; r++) {
                processes.get(s).get(r).writeConfig(remote
                        + "<zookeeper><node><host>127.0.0.1</host><port>" + zk.port + "</port></node>"
                        + "<session_timeout_ms>" + ZOOKEEPER_SESSION_TIMEOUT_MS + "</session_timeout_ms></zookeeper>"
                        + "<macros><shard>0" + (s + 1) + "</shard><replica>r" + (r + 1) + "</replica></macros>");
            }
        }
        ClickHouseCluster cluster = new ClickHouseCluster(zk, processes);
        try {
            processes.stream().flatMap(List::stream).toList().parallelStream().forEach(ServerProcess::start);
            cluster.nodes.stream().flatMap(List::stream).forEach(ClickHouseServer::awaitZooKeeper);
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /** Node {@code replica} of shard {@code shard}, both counted from 1. */
    public ClickHouseServer node(int shard, int replica) {
        return nodes.get(shard - 1).get(replica - 1);
    }

    public int shards() {
        return nodes.size();
    }

    /** Loopback port of the cluster's private ZooKeeper. */
    public int zooKeeperPort() {
        return zooKeeper.port;
    }

    /** SIGKILL of the cluster's ZooKeeper: replicated tables turn read-only until it is back. */
    public void killZooKeeper() {
        zooKeeper.kill();
    }

    /** Starts the cluster's ZooKeeper again (same port, same data) and waits until it answers. */
    public void startZooKeeper() {
        zooKeeper.start();
    }

    /** Per shard, the HTTP URLs of its replicas. */
    public List<List<String>> shardUrls() {
        return nodes.stream().map(shard -> shard.stream().map(ClickHouseServer::url).toList()).toList();
    }

    /** {@link #shardUrls()} as the value of {@code ingest.<name>.clickhouse.shards}: shards by ';', replicas by ','. */
    public String shardsSetting() {
        return shardUrls().stream().map(s -> String.join(",", s)).collect(Collectors.joining(";"));
    }

    /** Runs a statement on every node (DDL with {@code {shard}}/{@code {replica}} macros). */
    public void onEveryNode(String sql) {
        nodes.stream().flatMap(List::stream).forEach(n -> n.execute(sql));
    }

    /** Makes sure every node runs (after a test stopped some). */
    public void startAll() {
        for (List<ClickHouseServer.Process> shard : processes) {
            for (ClickHouseServer.Process p : shard) {
                p.start();
            }
        }
    }

    @Override
    public void close() {
        for (List<ClickHouseServer.Process> shard : processes) {
            for (ClickHouseServer.Process p : shard) {
                p.close();
            }
        }
        zooKeeper.close();
    }
}
