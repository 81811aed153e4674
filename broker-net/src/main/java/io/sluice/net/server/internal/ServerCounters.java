package io.sluice.net.server.internal;

import io.sluice.net.server.ServerStats;
import io.sluice.net.server.pipeline.ConnectionCounters;

import java.util.concurrent.atomic.LongAdder;

/** The binary port's counters: every port's connection counters, plus its records in and out. */
public final class ServerCounters extends ConnectionCounters {
    final LongAdder producedRecords = new LongAdder();
    final LongAdder fetchedRecords = new LongAdder();

    public ServerStats snapshot() {
        return new ServerStats(activeConnections.get(), acceptedConnections.sum(), refusedConnections.sum(),
                requests.sum(), errorResponses.sum(), protocolErrors.sum(), producedRecords.sum(),
                fetchedRecords.sum(), backPressurePauses.sum(), unauthenticatedConnections.get(),
                unauthenticatedCloses.sum(), unauthenticatedRefused.sum(), internalErrors.sum());
    }
}
