package io.sluice.net.testing;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.TopicPartition;
import io.sluice.net.client.RemoteConsumer;
import io.sluice.net.server.BrokerServer;
import io.sluice.net.server.BrokerServerConfig;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/** A real core broker in a temporary directory behind a real {@link BrokerServer} on a free loopback port. */
public final class TestBroker implements AutoCloseable {
    public final Path dataDir;
    public final Broker broker;
    private final UnaryOperator<BrokerServerConfig.Builder> serverSettings;
    private BrokerServer server;
    private int port;

    private TestBroker(Path dataDir, UnaryOperator<BrokerConfig.Builder> brokerSettings,
                       UnaryOperator<BrokerServerConfig.Builder> serverSettings) {
        this.dataDir = dataDir;
        this.broker = Broker.open(brokerSettings.apply(BrokerConfig.builder(dataDir)).build());
        this.serverSettings = serverSettings;
        this.server = BrokerServer.start(broker, serverSettings.apply(BrokerServerConfig.builder().port(0).ioThreads(2)).build());
        this.port = server.port();
    }

    public static TestBroker start(Path dataDir) {
        return new TestBroker(dataDir, b -> b, s -> s);
    }

    public static TestBroker start(Path dataDir, UnaryOperator<BrokerConfig.Builder> brokerSettings,
                                   UnaryOperator<BrokerServerConfig.Builder> serverSettings) {
        return new TestBroker(dataDir, brokerSettings, serverSettings);
    }

    public BrokerServer server() {
        return server;
    }

    public String bootstrap() {
        return "127.0.0.1:" + port;
    }

    public void stopServer() {
        server.close();
    }

    /** A new server on the same port (the broker keeps running): clients must reconnect. */
    public void restartServer() {
        server = BrokerServer.start(broker, serverSettings.apply(BrokerServerConfig.builder().port(port).ioThreads(2)).build());
    }

    /**
     * Reads {@code count} records from every partition of the topic from the beginning, over the network
     * ({@code RemoteConsumer}); returns what arrived within 30 s.
     */
    public List<ConsumerRecord> readAll(String topic, int partitions, int count) {
        List<ConsumerRecord> all = new ArrayList<>();
        ConsumerConfig config = ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).maxPollRecords(10_000).build();
        try (Consumer consumer = new RemoteConsumer(bootstrap(), config)) {
            Set<TopicPartition> tps = new HashSet<>();
            for (int p = 0; p < partitions; p++) {
                tps.add(new TopicPartition(topic, p));
            }
            consumer.assign(tps);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (all.size() < count && System.nanoTime() < deadline) {
                all.addAll(consumer.poll(Duration.ofMillis(200)));
            }
        }
        return all;
    }

    @Override
    public void close() {
        server.close();
        broker.close();
    }
}
