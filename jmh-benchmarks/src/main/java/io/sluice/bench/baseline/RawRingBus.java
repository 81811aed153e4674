package io.sluice.bench.baseline;

import com.lmax.disruptor.BatchEventProcessor;
import com.lmax.disruptor.BatchEventProcessorBuilder;
import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.EventTranslatorOneArg;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.dsl.ProducerType;
import io.sluice.bench.internal.DisruptorWait;
import io.sluice.core.WaitStrategyType;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * The raw baseline for the bus: one plain LMAX Disruptor {@link RingBuffer} per partition, each with one
 * {@link BatchEventProcessor} on its own thread — what Sluice's bus is built from, without topics, journal,
 * callbacks or metrics. Slots hold a reference to the caller's bytes (no copy), the cheapest possible hand-off.
 */
public final class RawRingBus implements AutoCloseable {

    /** A ring slot. */
    public static final class Slot {
        byte[] value;
        int length;
        long publishNanos;
    }

    /** What a partition's processor does with each slot (runs on that partition's thread). */
    @FunctionalInterface
    public interface SlotHandler {
        void onSlot(byte[] value, int length, long publishNanos, boolean endOfBatch) throws Exception;
    }

    /**
     * Stamps the publish time inside the claim of one event in 64 (by ring sequence), as Sluice stamps
     * {@code EventView.publishNanos()} for its sampled latency metrics; 0 for the others.
     */
    private static final EventTranslatorOneArg<Slot, byte[]> TRANSLATOR = (slot, seq, value) -> {
        slot.value = value;
        slot.length = value.length;
        slot.publishNanos = (seq & 63) == 0 ? System.nanoTime() : 0;
    };

    private final List<RingBuffer<Slot>> rings = new ArrayList<>();
    private final List<BatchEventProcessor<Slot>> processors = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();

    /**
     * @param multiProducer true when several threads publish to one ring (Disruptor MULTI producer sequencer)
     */
    public RawRingBus(String name, int partitions, int ringSize, WaitStrategyType wait, boolean multiProducer,
                      IntFunction<SlotHandler> handlerForPartition) {
        for (int p = 0; p < partitions; p++) {
            RingBuffer<Slot> ring = RingBuffer.create(multiProducer ? ProducerType.MULTI : ProducerType.SINGLE,
                    Slot::new, ringSize, DisruptorWait.of(wait, multiProducer));
            SlotHandler handler = handlerForPartition.apply(p);
            EventHandler<Slot> eh = (slot, seq, endOfBatch) -> handler.onSlot(slot.value, slot.length, slot.publishNanos, endOfBatch);
            BatchEventProcessor<Slot> processor = new BatchEventProcessorBuilder().build(ring, ring.newBarrier(), eh);
            ring.addGatingSequences(processor.getSequence());
            Thread t = new Thread(processor, name + "-p" + p);
            t.setDaemon(true);
            rings.add(ring);
            processors.add(processor);
            threads.add(t);
        }
        threads.forEach(Thread::start);
    }

    /** Never blocks: false when the ring is full. */
    public boolean tryPublish(int partition, byte[] value) {
        return rings.get(partition).tryPublishEvent(TRANSLATOR, value);
    }

    /** Blocks (spinning) while the ring is full. */
    public void publish(int partition, byte[] value) {
        RingBuffer<Slot> ring = rings.get(partition);
        while (!ring.tryPublishEvent(TRANSLATOR, value)) {
            Thread.onSpinWait();
        }
    }

    /** Events fully handled on a partition. */
    public long processed(int partition) {
        return processors.get(partition).getSequence().get() + 1;
    }

    public long processedTotal() {
        long sum = 0;
        for (int p = 0; p < processors.size(); p++) {
            sum += processed(p);
        }
        return sum;
    }

    public int partitions() {
        return rings.size();
    }

    @Override
    public void close() throws InterruptedException {
        processors.forEach(BatchEventProcessor::halt);
        for (Thread t : threads) {
            t.join(10_000);
        }
    }
}
