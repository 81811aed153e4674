package io.sluice.net.server.pipeline;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * What every port counts about its connections, written by every event loop (LongAdder: no shared cache line on the
 * hot path). A port's own counters extend this with what only it does.
 */
public class ConnectionCounters {
    public final AtomicInteger activeConnections = new AtomicInteger();
    public final LongAdder acceptedConnections = new LongAdder();
    /** closed at once: {@code max.connections} reached */
    public final LongAdder refusedConnections = new LongAdder();
    public final LongAdder requests = new LongAdder();
    public final LongAdder errorResponses = new LongAdder();
    /** connections closed because their bytes broke the protocol or its framing */
    public final LongAdder protocolErrors = new LongAdder();
    public final LongAdder backPressurePauses = new LongAdder();
    public final AtomicInteger unauthenticatedConnections = new AtomicInteger();
    public final LongAdder unauthenticatedCloses = new LongAdder();
    /** closed at once: {@code max.unauthenticated.connections} reached */
    public final LongAdder unauthenticatedRefused = new LongAdder();
    /** requests answered with an error because an operation failed unexpectedly */
    public final LongAdder internalErrors = new LongAdder();
}
