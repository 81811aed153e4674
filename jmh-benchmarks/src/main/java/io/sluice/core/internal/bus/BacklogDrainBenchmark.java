package io.sluice.core.internal.bus;

import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.EventPoller;
import com.lmax.disruptor.RingBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

import java.util.concurrent.TimeUnit;

/**
 * What one consumer pays per event to drain a 15,000-event backlog of a multi-producer ring (the event-bus burst),
 * one thread, nothing else running, so the figure holds on a shared machine. Targets, measured in the same run:
 * <ul>
 *   <li>{@code polled-stage}: Sluice's {@link PolledStage}, turns of {@link PartitionRing#SUBSCRIBER_MAX_BATCH}
 *       events, each scanning the availability flags of its own turn only;</li>
 *   <li>{@code event-poller-capped}: what {@code PolledStage} was before issue 22: the Disruptor's {@link EventPoller}
 *       stopped after the same number of events a turn, whose every poll asks
 *       {@code getHighestPublishedSequence(next, cursor)}, a scan over the whole remaining backlog;</li>
 *   <li>{@code event-poller-whole}: the raw baseline, one {@code EventPoller} poll over the whole backlog (one scan,
 *       as a {@code BatchEventProcessor} does).</li>
 * </ul>
 * In the package of the class it measures (package-private); a benchmark, not part of the broker.
 * <pre>java -jar jmh-benchmarks/target/benchmarks.jar BacklogDrainBenchmark</pre>
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms256m", "-Xmx256m"})
@State(Scope.Thread)
public class BacklogDrainBenchmark {
    static final int BACKLOG = 15_000;
    static final int RING_SIZE = 16_384;

    @Param({"polled-stage", "event-poller-capped", "event-poller-whole"})
    public String target;

    private RingBuffer<RingSlot> ring;
    private PolledStage stage;
    private EventPoller<RingSlot> poller;
    private int turn;
    private Blackhole blackhole;

    @Setup(Level.Trial)
    public void setUp(Blackhole bh) {
        blackhole = bh;
        ring = RingBuffer.createMultiProducer(RingSlot::new, RING_SIZE, new Wakers());
        EventHandler<RingSlot> handler = (slot, sequence, endOfBatch) -> blackhole.consume(slot);
        if (target.equals("polled-stage")) {
            stage = new PolledStage("drain", ring, ring::getCursor, true, handler, PartitionRing.SUBSCRIBER_MAX_BATCH, null);
            ring.addGatingSequences(stage.sequence());
        } else {
            poller = ring.newPoller();
            ring.addGatingSequences(poller.getSequence());
        }
    }

    @Setup(Level.Invocation)
    public void publishBacklog() {
        for (int i = 0; i < BACKLOG; i++) {
            ring.publish(ring.next());
        }
    }

    @Benchmark
    @OperationsPerInvocation(BACKLOG)
    public int drain() throws Exception {
        int turns = 0;
        if (stage != null) {
            while (stage.poll() > 0) {
                turns++;
            }
            return turns;
        }
        boolean capped = target.equals("event-poller-capped");
        EventPoller.Handler<RingSlot> h = (slot, sequence, endOfBatch) -> {
            blackhole.consume(slot);
            return !capped || ++turn < PartitionRing.SUBSCRIBER_MAX_BATCH;
        };
        while (true) {
            turn = 0;
            if (poller.poll(h) != EventPoller.PollState.PROCESSING) {
                return turns;
            }
            turns++;
        }
    }
}
