package io.sluice.ingest;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;

/**
 * Opens the {@link Consumer} an ingest pipeline reads its topic with. Embedded: {@code broker::newConsumer};
 * remote: broker-net's {@code RemoteConsumer} (it implements the same interface) — the CLI and the broker pass
 * the right one in, so ingest-pipeline does not depend on broker-net.
 */
@FunctionalInterface
public interface ConsumerFactory {
    Consumer open(ConsumerConfig config);
}
