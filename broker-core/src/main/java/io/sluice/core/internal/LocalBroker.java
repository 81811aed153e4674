package io.sluice.core.internal;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;

/** Placeholder while the implementation lands. */
public final class LocalBroker {
    private LocalBroker() {
    }

    public static Broker open(BrokerConfig config) {
        throw new UnsupportedOperationException("not yet implemented");
    }
}
