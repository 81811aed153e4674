package io.sluice.net.testing;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.net.server.BrokerServer;
import io.sluice.net.server.BrokerServerConfig;

import java.nio.file.Path;
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

    @Override
    public void close() {
        server.close();
        broker.close();
    }
}
