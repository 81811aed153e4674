package io.sluice.kafka.internal;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/** The Kafka listener's counters, written by every event loop (LongAdder: no shared cache line on the hot path). */
public final class KafkaCounters {
    public final AtomicInteger activeConnections = new AtomicInteger();
    public final LongAdder acceptedConnections = new LongAdder();
    public final LongAdder refusedConnections = new LongAdder();
    public final LongAdder requests = new LongAdder();
    public final LongAdder errorResponses = new LongAdder();
    public final LongAdder protocolErrors = new LongAdder();
    public final LongAdder producedRecords = new LongAdder();
    public final LongAdder fetchedBatches = new LongAdder();
    public final LongAdder backPressurePauses = new LongAdder();
    public final AtomicInteger unauthenticatedConnections = new AtomicInteger();
    public final LongAdder unauthenticatedCloses = new LongAdder();
    public final LongAdder unauthenticatedRefused = new LongAdder();
    public final LongAdder internalErrors = new LongAdder();
}
