package io.sluice.kafka.internal;

import io.sluice.net.server.pipeline.ConnectionCounters;

import java.util.concurrent.atomic.LongAdder;

/** The Kafka listener's counters: every port's connection counters, plus its records in and batches out. */
public final class KafkaCounters extends ConnectionCounters {
    public final LongAdder producedRecords = new LongAdder();
    public final LongAdder fetchedBatches = new LongAdder();
}
