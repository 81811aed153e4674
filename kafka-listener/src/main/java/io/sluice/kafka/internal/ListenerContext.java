package io.sluice.kafka.internal;

import io.sluice.core.internal.BrokerFront;
import io.sluice.core.Broker;
import io.sluice.kafka.KafkaListenerConfig;
import io.sluice.net.security.TokenAuthenticator;
import io.sluice.net.server.BrokerServerConfig;

import java.util.concurrent.Executor;

/**
 * What every Kafka connection of one listener shares: the core broker, the settings, the handler table, the
 * cluster identity (id, this node, the advertised address), the counters, and the admin
 * executor for calls that may block on files (topic creation, metadata). Thread-safe: all fields are final and
 * their types thread-safe.
 */
public final class ListenerContext {
    private final Broker broker;
    private final BrokerFront front;
    private final KafkaListenerConfig config;
    private final KafkaCounters counters;
    private final Executor admin;
    private final TokenAuthenticator authenticator;
    private final String clusterId;
    private final String advertisedHost;
    private volatile int advertisedPort;
    private volatile KafkaApis apis;

    public ListenerContext(Broker broker, KafkaListenerConfig config, KafkaCounters counters,
                           Executor admin, String advertisedHost) {
        this.broker = broker;
        this.front = BrokerFront.of(broker);
        this.config = config;
        this.counters = counters;
        this.admin = admin;
        this.advertisedHost = advertisedHost;
        String token = config.server().authToken();
        this.authenticator = token == null ? null : TokenAuthenticator.of(token);
        this.clusterId = ClusterIdentity.loadOrCreate(broker.config().dataDir().resolve("kafka"));
    }

    /** Set once by the listener before it accepts connections. */
    public void apis(KafkaApis apis) {
        this.apis = apis;
    }

    /** Set once by the listener after binding (the port is known only then when it was 0). */
    public void advertisedPort(int port) {
        this.advertisedPort = port;
    }

    public Broker broker() {
        return broker;
    }

    /** What a network front needs beyond {@link Broker}: appending a checked batch, partition readers, append wake-ups. */
    public BrokerFront front() {
        return front;
    }

    public KafkaListenerConfig config() {
        return config;
    }

    public BrokerServerConfig server() {
        return config.server();
    }

    public KafkaCounters counters() {
        return counters;
    }

    /** Runs calls that may block (file I/O, topic creation) off the event loops, one at a time, in order. */
    public Executor admin() {
        return admin;
    }

    public KafkaApis apis() {
        return apis;
    }

    public String clusterId() {
        return clusterId;
    }

    public int nodeId() {
        return config.nodeId();
    }

    public String advertisedHost() {
        return advertisedHost;
    }

    public int advertisedPort() {
        return advertisedPort;
    }

    boolean authRequired() {
        return authenticator != null;
    }

    /** Constant-time comparison (the binary and HTTP ports' authenticator). */
    boolean tokenMatches(byte[] presented) {
        return authenticator != null && authenticator.authenticate(presented);
    }
}
