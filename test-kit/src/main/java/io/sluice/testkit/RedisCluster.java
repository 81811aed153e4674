package io.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A Redis Cluster for tests: {@code masters × (1 + replicasPerMaster)} private {@code redis-server} processes in
 * cluster mode ({@code cluster-enabled yes}, {@code cluster-node-timeout} {@value #NODE_TIMEOUT_MS} ms) on free
 * loopback ports, each in its own temporary directory, joined with {@code redis-cli --cluster create ...
 * --cluster-replicas N --cluster-yes}. {@link #start} returns once every node reports {@code cluster_state:ok}
 * and every master has its replicas attached, so a failover can happen at once.
 *
 * <pre>{@code
 * try (RedisCluster cluster = RedisCluster.start(3, 1)) {
 *     Node owner = cluster.masterOf("sluice:{events}");
 *     owner.kill();
 *     Node promoted = cluster.awaitNewMasterOf("sluice:{events}", owner);
 * }
 * }</pre>
 *
 * Faults: {@link Node#kill()} (SIGKILL; the cluster promotes the node's replica after the node timeout),
 * {@link Node#start()} (the node rejoins with its {@code nodes.conf}; a former master comes back as a replica),
 * {@link #failover(Node)} ({@code CLUSTER FAILOVER} on a replica: coordinated, the master stops writes until its
 * replica caught up, so nothing acknowledged is lost), and {@link #moveSlot(int, Node)} (a resharding of one slot
 * with {@code CLUSTER SETSLOT ... MIGRATING/IMPORTING}, {@code MIGRATE} of its keys and {@code SETSLOT ... NODE}).
 * No persistence: a node killed and started again resynchronises from its master. Share one per test class.
 */
public final class RedisCluster implements AutoCloseable {
    /** {@code cluster-node-timeout}: how long a silent master stays a master; a failover takes about twice this. */
    public static final int NODE_TIMEOUT_MS = 1_000;
    private static final String[] SERVER = {"redis-server", "/usr/bin/redis-server"};
    private static final String[] CLI = {"redis-cli", "/usr/bin/redis-cli"};
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    private final List<Node> nodes;
    private final int masters;
    private final int replicasPerMaster;

    private RedisCluster(List<Node> nodes, int masters, int replicasPerMaster) {
        this.nodes = nodes;
        this.masters = masters;
        this.replicasPerMaster = replicasPerMaster;
    }

    /** True if {@code redis-server} and {@code redis-cli} are installed. */
    public static boolean isInstalled() {
        return ServerProcess.isInstalled(SERVER) && ServerProcess.isInstalled(CLI);
    }

    /** Starts the nodes, creates the cluster (slots spread evenly over the masters) and waits until it is ready. */
    public static RedisCluster start(int masters, int replicasPerMaster) {
        if (masters < 3) {
            throw new IllegalArgumentException("Redis Cluster needs at least 3 masters, not " + masters);
        }
        List<Node> nodes = new ArrayList<>();
        for (int i = 0; i < masters * (1 + replicasPerMaster); i++) {
            nodes.add(new Node(i));
        }
        RedisCluster cluster = new RedisCluster(nodes, masters, replicasPerMaster);
        try {
            nodes.parallelStream().forEach(Node::start);
            List<String> create = new ArrayList<>(List.of("--cluster", "create"));
            nodes.forEach(n -> create.add("127.0.0.1:" + n.port));
            create.addAll(List.of("--cluster-replicas", Integer.toString(replicasPerMaster), "--cluster-yes"));
            cli(create);
            cluster.awaitHealthy();
        } catch (RuntimeException | Error e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /** The seed list as Lettuce's cluster client takes it: {@code redis://127.0.0.1:p1,127.0.0.1:p2,...}. */
    public String url() {
        return "redis://" + nodes.stream().map(n -> "127.0.0.1:" + n.port).collect(Collectors.joining(","));
    }

    public List<Node> nodes() {
        return List.copyOf(nodes);
    }

    /**
     * Waits until every running node says {@code cluster_state:ok}, sees the same masters for every slot, and every
     * master has {@code replicasPerMaster} replicas with their replication link up (a node just started again may
     * still be synchronising).
     */
    public void awaitHealthy() {
        Await.until(() -> "a healthy cluster; nodes:\n" + describe(), DEADLINE, this::healthy);
    }

    private boolean healthy() {
        List<Node> up = nodes.stream().filter(Node::isRunning).toList();
        if (up.size() < nodes.size()) {
            return false;
        }
        try {
            String view = null;
            for (Node n : up) {
                if (!n.command("CLUSTER", "INFO").contains("cluster_state:ok")) {
                    return false;
                }
                String masterView = masterPorts(n.command("CLUSTER", "NODES"));
                if (view != null && !view.equals(masterView)) {
                    return false;
                }
                view = masterView;
            }
            int linked = 0;
            for (Node n : up) {
                String info = n.command("INFO", "replication");
                if (info.contains("role:slave") && info.contains("master_link_status:up")) {
                    linked++;
                }
            }
            return linked == masters * replicasPerMaster;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** "port:master" for the masters with slots in one node's CLUSTER NODES, sorted: equal views agree. */
    private static String masterPorts(String clusterNodes) {
        return clusterNodes.lines().map(l -> l.split(" "))
                .filter(f -> f.length > 8 && f[2].contains("master") && !f[2].contains("fail"))
                .map(f -> portOf(f[1]) + "=" + String.join(" ", List.of(f).subList(8, f.length)))
                .sorted().collect(Collectors.joining(";"));
    }

    /** The node a running node reports as the master of {@code key}'s slot. */
    public Node masterOf(String key) {
        return masterOfSlot(slot(key));
    }

    /** The master of a slot, as a running node sees it. */
    public Node masterOfSlot(int slot) {
        Node any = nodes.stream().filter(Node::isRunning).findFirst().orElseThrow();
        for (String line : any.command("CLUSTER", "NODES").lines().toList()) {
            String[] f = line.split(" ");
            if (!f[2].contains("master") || f[2].contains("fail")) {
                continue;
            }
            for (int i = 8; i < f.length; i++) {
                if (f[i].startsWith("[")) {
                    continue; // a slot being migrated
                }
                String[] range = f[i].split("-");
                int from = Integer.parseInt(range[0]);
                int to = range.length > 1 ? Integer.parseInt(range[1]) : from;
                if (slot >= from && slot <= to) {
                    return byPort(portOf(f[1]));
                }
            }
        }
        throw new IllegalStateException("no master serves slot " + slot + ":\n" + describe());
    }

    /** The port in a CLUSTER NODES address such as {@code 127.0.0.1:30001@40001[,hostname]}. */
    private static int portOf(String address) {
        return Integer.parseInt(address.substring(address.indexOf(':') + 1, address.indexOf('@')));
    }

    /** Starts every node a test stopped or killed and waits until the cluster is healthy again. */
    public void startAll() {
        nodes.forEach(Node::start);
        awaitHealthy();
    }

    /** A replica of {@code master}, as the master reports it. */
    public Node replicaOf(Node master) {
        for (String line : master.command("INFO", "replication").lines().toList()) {
            if (line.startsWith("slave") && line.contains("port=")) {
                String port = line.replaceAll(".*port=(\\d+).*", "$1").trim();
                return byPort(Integer.parseInt(port));
            }
        }
        throw new IllegalStateException(master + " has no replica:\n" + describe());
    }

    /**
     * After {@code old} was killed: waits until another node is the master of {@code key}'s slot and the cluster
     * is {@code cluster_state:ok} again (seen from a running node), and returns the new master.
     */
    public Node awaitNewMasterOf(String key, Node old) {
        int slot = slot(key);
        Node[] promoted = new Node[1];
        Await.until(() -> "a new master for slot " + slot + " after " + old + " failed:\n" + describe(), DEADLINE, () -> {
            try {
                Node m = masterOfSlot(slot);
                if (m == old || !m.command("CLUSTER", "INFO").contains("cluster_state:ok")
                        || !m.command("INFO", "replication").contains("role:master")) {
                    return false;
                }
                promoted[0] = m;
                return true;
            } catch (RuntimeException e) {
                return false;
            }
        });
        return promoted[0];
    }

    /**
     * Coordinated failover: {@code CLUSTER FAILOVER} on {@code replica}, which becomes master of its master's
     * slots once it has every write the master acknowledged; returns when it is master.
     */
    public void failover(Node replica) {
        String reply = replica.command("CLUSTER", "FAILOVER");
        if (!reply.startsWith("OK")) {
            throw new IllegalStateException("CLUSTER FAILOVER on " + replica + ": " + reply);
        }
        Await.until(() -> replica + " promoted, as every running node sees it:\n" + describe(), DEADLINE, () -> {
            try {
                if (!replica.command("INFO", "replication").contains("role:master")) {
                    return false;
                }
                for (Node n : nodes) {
                    if (n.isRunning() && !(";" + masterPorts(n.command("CLUSTER", "NODES"))).contains(";" + replica.port + "=")) {
                        return false;
                    }
                }
                return true;
            } catch (RuntimeException e) {
                return false;
            }
        });
    }

    /**
     * Resharding of one slot to {@code target} while clients keep using it: SETSLOT IMPORTING on the target,
     * MIGRATING on the source, MIGRATE of the slot's keys in groups of 100 (clients get ASK for keys already
     * moved), then SETSLOT NODE on every master (clients get MOVED).
     */
    public void moveSlot(int slot, Node target) {
        Node source = masterOfSlot(slot);
        if (source == target) {
            return;
        }
        String s = Integer.toString(slot);
        expectOk(target.command("CLUSTER", "SETSLOT", s, "IMPORTING", source.id()), "IMPORTING");
        expectOk(source.command("CLUSTER", "SETSLOT", s, "MIGRATING", target.id()), "MIGRATING");
        while (true) {
            List<String> keys = source.command("CLUSTER", "GETKEYSINSLOT", s, "100").lines().filter(l -> !l.isEmpty()).toList();
            if (keys.isEmpty()) {
                break;
            }
            List<String> migrate = new ArrayList<>(List.of("MIGRATE", "127.0.0.1", Integer.toString(target.port), "", "0", "10000", "KEYS"));
            migrate.addAll(keys);
            expectOk(source.command(migrate.toArray(String[]::new)), "MIGRATE");
        }
        for (Node n : nodes) {
            if (n.isRunning() && n.command("INFO", "replication").contains("role:master")) {
                expectOk(n.command("CLUSTER", "SETSLOT", s, "NODE", target.id()), "SETSLOT NODE");
            }
        }
        Await.until(() -> "slot " + slot + " on " + target + ":\n" + describe(), DEADLINE, () -> {
            try {
                return masterOfSlot(slot) == target;
            } catch (RuntimeException e) {
                return false;
            }
        });
    }

    private static void expectOk(String reply, String what) {
        if (!reply.strip().startsWith("OK")) {
            throw new IllegalStateException(what + " failed: " + reply);
        }
    }

    /** The hash slot of a key (hash tags included), as Redis computes it. */
    public int slot(String key) {
        Node any = nodes.stream().filter(Node::isRunning).findFirst().orElseThrow();
        return Integer.parseInt(any.command("CLUSTER", "KEYSLOT", key).strip());
    }

    /** Every running node's CLUSTER NODES line for itself, for failure messages. */
    public String describe() {
        StringBuilder sb = new StringBuilder();
        for (Node n : nodes) {
            sb.append(n).append(": ");
            try {
                sb.append(n.isRunning() ? n.command("CLUSTER", "NODES").lines().filter(l -> l.contains("myself")).findFirst().orElse("?")
                        : "down");
            } catch (RuntimeException e) {
                sb.append(e.getMessage());
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    private Node byPort(int port) {
        return nodes.stream().filter(n -> n.port == port).findFirst()
                .orElseThrow(() -> new IllegalStateException("no node on port " + port));
    }

    @Override
    public void close() {
        nodes.forEach(Node::close);
    }

    /** Runs redis-cli with the arguments and returns its output (non-zero exit: IllegalStateException). */
    static String cli(List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ServerProcess.findBinary(CLI).toString());
        cmd.addAll(args);
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(cmd + " failed:\n" + new String(out, StandardCharsets.UTF_8));
            }
            return new String(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + cmd, e);
        }
    }

    /** One cluster node: its own process, port and directory ({@code nodes.conf} survives a restart). */
    public static final class Node extends ServerProcess {
        final int port = freePort();
        private final int index;
        private String id;

        Node(int index) {
            super("redis-cluster-" + index, null);
            this.index = index;
        }

        public int port() {
            return port;
        }

        /** The node's cluster id (CLUSTER MYID). */
        public synchronized String id() {
            if (id == null) {
                id = command("CLUSTER", "MYID").strip();
            }
            return id;
        }

        /** Runs one command on this node through {@code redis-cli} and returns its output (raw lines). */
        public String command(String... args) {
            List<String> cli = new ArrayList<>(List.of("-h", "127.0.0.1", "-p", Integer.toString(port)));
            cli.addAll(List.of(args));
            return cli(cli);
        }

        /** {@code XLEN key} on this node (the key's slot must be served here). */
        public long xlen(String key) {
            return Long.parseLong(command("XLEN", key).strip());
        }

        @Override
        protected List<String> command() {
            String bin = findBinary(SERVER).toString();
            return List.of(bin, "--port", Integer.toString(port), "--bind", "127.0.0.1", "--dir", dir.toAbsolutePath().toString(),
                    "--cluster-enabled", "yes", "--cluster-config-file", dir.resolve("nodes.conf").toAbsolutePath().toString(),
                    "--cluster-node-timeout", Integer.toString(NODE_TIMEOUT_MS), "--save", "", "--appendonly", "no",
                    "--daemonize", "no", "--protected-mode", "yes", "--logfile", dir.resolve("redis.log").toAbsolutePath().toString());
        }

        @Override
        protected String logTail() {
            try {
                List<String> lines = Files.readAllLines(dir.resolve("redis.log"));
                return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
            } catch (IOException | UncheckedIOException e) {
                return super.logTail();
            }
        }

        @Override
        protected boolean isReady() {
            return RedisServer.answersPing(port);
        }

        @Override
        public String toString() {
            return "node" + index + "@" + port;
        }
    }
}
