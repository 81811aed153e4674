package io.sluice.bench.scenario;

import io.sluice.bench.BenchOptions;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;

import java.nio.file.Path;

/** Opens the embedded broker a scenario measures, or explains why this build cannot. */
final class SluiceBroker {
    private SluiceBroker() {
    }

    /** The broker, or null with {@code reason[0]} set when broker-core is not implemented in this build. */
    static Broker open(Path dir, BenchOptions o, int ringSize, String[] reason) {
        try {
            return Broker.open(BrokerConfig.builder(dir).ringSize(ringSize).waitStrategy(o.waitStrategy()).build());
        } catch (UnsupportedOperationException e) {
            reason[0] = "broker-core is not implemented in this build (" + e.getMessage() + ")";
            return null;
        }
    }
}
