package io.sluice.net.server.internal;

import io.sluice.net.server.ServerStats;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/** Counters written by every event loop (LongAdder: no shared cache line on the hot path). */
public final class ServerCounters {
    final AtomicInteger activeConnections = new AtomicInteger();
    final LongAdder acceptedConnections = new LongAdder();
    final LongAdder refusedConnections = new LongAdder();
    final LongAdder requests = new LongAdder();
    final LongAdder errorResponses = new LongAdder();
    final LongAdder protocolErrors = new LongAdder();
    final LongAdder producedRecords = new LongAdder();
    final LongAdder fetchedRecords = new LongAdder();
    final LongAdder backPressurePauses = new LongAdder();
    /** Connections open and not yet authenticated (only counted when a token is configured). */
    final AtomicInteger unauthenticatedConnections = new AtomicInteger();
    final LongAdder unauthenticatedCloses = new LongAdder();
    final LongAdder unauthenticatedRefused = new LongAdder();
    final LongAdder internalErrors = new LongAdder();

    public ServerStats snapshot() {
        return new ServerStats(activeConnections.get(), acceptedConnections.sum(), refusedConnections.sum(),
                requests.sum(), errorResponses.sum(), protocolErrors.sum(), producedRecords.sum(),
                fetchedRecords.sum(), backPressurePauses.sum(), unauthenticatedConnections.get(),
                unauthenticatedCloses.sum(), unauthenticatedRefused.sum(), internalErrors.sum());
    }
}
