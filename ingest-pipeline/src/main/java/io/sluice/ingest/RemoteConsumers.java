package io.sluice.ingest;

/**
 * Service-provider interface through which {@code sluice ingest} reaches a running broker without
 * ingest-pipeline depending on broker-net (broker-net depends on ingest-pipeline). broker-net registers its
 * implementation in {@code META-INF/services/io.sluice.ingest.RemoteConsumers}; it returns a factory of
 * {@code RemoteConsumer}s connected to {@code bootstrap} (HOST:PORT).
 */
public interface RemoteConsumers {
    ConsumerFactory connect(String bootstrap);
}
