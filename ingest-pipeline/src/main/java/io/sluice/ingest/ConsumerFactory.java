package io.sluice.ingest;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.net.client.RemoteConsumer;

/**
 * Opens the {@link Consumer} an ingest pipeline reads its topic with: {@code broker::newConsumer} in the broker's
 * process, {@link #remote(String)} against a running broker.
 */
@FunctionalInterface
public interface ConsumerFactory {
    Consumer open(ConsumerConfig config);

    /** Consumers of the broker at {@code bootstrap} (HOST:PORT), over the binary protocol. */
    static ConsumerFactory remote(String bootstrap) {
        return config -> new RemoteConsumer(bootstrap, config);
    }
}
