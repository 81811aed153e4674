package io.sluice.bench.scenario;

import io.sluice.bench.baseline.RawRingBus;
import io.sluice.bench.internal.TradeMessages;
import io.sluice.core.WaitStrategyType;

/** The event-bus baseline: raw Disruptor rings of the same size, one consumer thread per partition, no journal. */
final class RawBus implements BusUnderTest {
    private final RawRingBus bus;
    private final byte[][] payloads;

    RawBus(int partitions, int ringSize, WaitStrategyType wait, byte[][] payloads, LatencyProbe probe) {
        this(partitions, ringSize, wait, payloads, probe, false);
    }

    /** @param multiProducer a multi-producer ring (what Sluice's rings are) instead of the single-producer one */
    RawBus(int partitions, int ringSize, WaitStrategyType wait, byte[][] payloads, LatencyProbe probe, boolean multiProducer) {
        this.payloads = payloads;
        this.bus = new RawRingBus(multiProducer ? "raw-mp-bus" : "raw-bus", partitions, ringSize, wait, multiProducer,
                p -> (value, length, publishNanos, endOfBatch) -> probe.onEvent(p, TradeMessages.id(value, length)));
    }

    @Override
    public boolean tryPublish(int id) {
        return bus.tryPublish(id % bus.partitions(), payloads[id]);
    }

    @Override
    public long errors() {
        return 0;
    }

    @Override
    public void close() throws InterruptedException {
        bus.close();
    }
}
