package io.sluice.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A private Kafka cluster for the long fault runs: {@code n} {@link KafkaBroker} nodes on loopback, each broker and
 * controller (KRaft, a static voter set of all nodes), one cluster id, internal topics replicated {@code min(n, 3)}
 * times with {@code min.insync.replicas} one less. Nodes can be SIGKILLed and started again with the same ports and
 * data; the cluster keeps a controller quorum and its partitions' leaders while a majority runs.
 *
 * <pre>{@code
 * try (KafkaCluster kafka = KafkaCluster.start(3)) {
 *     ... bootstrap.servers = kafka.bootstrap()
 *     kafka.node(2).kill(); ... kafka.node(2).start();
 * }
 * }</pre>
 */
public final class KafkaCluster implements AutoCloseable {
    private final List<KafkaBroker> nodes;

    private KafkaCluster(List<KafkaBroker> nodes) {
        this.nodes = nodes;
    }

    /** Formats and starts {@code n} nodes (in parallel) and waits until each answers. */
    public static KafkaCluster start(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("a cluster needs at least one node, got " + n);
        }
        int[] ports = new int[n];
        int[] controllerPorts = new int[n];
        StringBuilder voters = new StringBuilder();
        for (int i = 0; i < n; i++) {
            ports[i] = ServerProcess.freePort();
            controllerPorts[i] = ServerProcess.freePort();
            voters.append(i == 0 ? "" : ",").append(i + 1).append("@127.0.0.1:").append(controllerPorts[i]);
        }
        String clusterId = KafkaBroker.newClusterId();
        List<KafkaBroker> nodes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            nodes.add(new KafkaBroker(i + 1, ports[i], controllerPorts[i], voters.toString(), Math.min(n, 3), clusterId));
        }
        KafkaCluster cluster = new KafkaCluster(nodes);
        try {
            nodes.forEach(KafkaBroker::format);
            // a node is ready only once a quorum of controllers runs: start them together, a thread each
            List<Thread> starters = new ArrayList<>();
            List<RuntimeException> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            for (KafkaBroker node : nodes) {
                Thread t = new Thread(() -> {
                    try {
                        node.start();
                    } catch (RuntimeException e) {
                        failures.add(e);
                    }
                }, "kafka-cluster-start-" + node.nodeId());
                t.start();
                starters.add(t);
            }
            for (Thread t : starters) {
                t.join();
            }
            if (!failures.isEmpty()) {
                throw failures.get(0);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            cluster.close();
            throw new IllegalStateException("interrupted while starting the Kafka cluster", e);
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /** Node {@code id}, counted from 1 (its {@code node.id}). */
    public KafkaBroker node(int id) {
        return nodes.get(id - 1);
    }

    public int size() {
        return nodes.size();
    }

    /** Every node's address, the value of {@code bootstrap.servers}. */
    public String bootstrap() {
        return nodes.stream().map(KafkaBroker::bootstrap).collect(Collectors.joining(","));
    }

    @Override
    public void close() {
        nodes.forEach(KafkaBroker::close);
    }
}
