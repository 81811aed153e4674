package io.sluice.net.server.internal;

import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.internal.BrokerFront;
import io.sluice.net.security.TokenAuthenticator;
import io.sluice.net.server.BrokerServerConfig;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.Executor;

/**
 * What every connection of one server shares: the core broker, one core producer per acks level (thread-safe,
 * never blocking: connections use {@code trySend}), the admin executor for calls that touch files and the counters.
 */
public final class ServerContext implements AutoCloseable {
    final Broker broker;
    /** The broker's hooks for a network front: batch appends, readers, append wake-ups. */
    final BrokerFront front;
    final BrokerServerConfig config;
    final ServerCounters counters;
    /** Runs topic administration (may block on file I/O: create topic, metadata) off the event loops. */
    final Executor admin;
    /** Runs group calls and offset commits off the event loops, apart from {@link #admin}: heartbeats never queue behind a topic creation. */
    final Executor groups;
    private final Map<Acks, Producer> producers = new EnumMap<>(Acks.class);
    private final TokenAuthenticator authenticator;

    public ServerContext(Broker broker, BrokerServerConfig config, ServerCounters counters, Executor admin) {
        this(broker, config, counters, admin, admin);
    }

    public ServerContext(Broker broker, BrokerServerConfig config, ServerCounters counters, Executor admin,
                         Executor groups) {
        this.groups = groups;
        this.broker = broker;
        this.front = BrokerFront.of(broker);
        this.config = config;
        this.counters = counters;
        this.admin = admin;
        for (Acks acks : Acks.values()) {
            producers.put(acks, broker.newProducer(ProducerConfig.builder().acks(acks).maxBlockMillis(0).build()));
        }
        this.authenticator = config.authToken() == null ? null : TokenAuthenticator.of(config.authToken());
    }

    /** The server's settings. */
    public BrokerServerConfig config() {
        return config;
    }

    Producer producer(Acks acks) {
        return producers.get(acks);
    }

    boolean authRequired() {
        return authenticator != null;
    }

    /** Constant-time comparison (shared with the HTTP port), so timing does not leak how much of a guess was right. */
    boolean tokenMatches(String presented) {
        return authenticator != null && authenticator.authenticate(presented);
    }

    /** Flushes and closes the producers; call after every connection closed. */
    @Override
    public void close() {
        for (Producer p : producers.values()) {
            p.close();
        }
    }
}
