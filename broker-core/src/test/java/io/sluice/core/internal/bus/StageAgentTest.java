package io.sluice.core.internal.bus;

import com.lmax.disruptor.RingBuffer;
import io.sluice.core.WaitStrategyType;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@link StageAgent}'s duty cycle batches on the consuming side: after a cycle that handled a few events (fewer than
 * one cache line of availability flags) it pauses before the next, so that the producers run ahead; a cycle that
 * found nothing, or many, returns at once. The pause here is a second, so that "at once" holds on a loaded machine.
 */
class StageAgentTest {
    private static final long PAUSE_NANOS = Duration.ofSeconds(1).toNanos();

    private final RingBuffer<RingSlot> ring = RingBuffer.createMultiProducer(RingSlot::new, 256, new Wakers());
    private final List<Long> handled = new ArrayList<>();

    private StageAgent agentPolling(long pauseNanos) {
        StageAgent agent = new StageAgent("test-agent", WaitStrategyType.SLEEPING, pauseNanos);
        PolledStage stage = new PolledStage("test", ring, ring::getCursor, true,
                (slot, sequence, endOfBatch) -> handled.add(sequence), 256, null);
        ring.addGatingSequences(stage.sequence());
        agent.add(stage);
        assertThat(agent.doWork()).isEqualTo(1); // runs the add command: no event, no pause
        return agent;
    }

    private void publish(int events) {
        for (int i = 0; i < events; i++) {
            ring.publish(ring.next());
        }
    }

    @Test
    void aCycleThatHandledFewEventsPausesAfterHandlingThem() {
        StageAgent agent = agentPolling(PAUSE_NANOS);
        publish(StageAgent.SMALL_DUTY_CYCLE - 1);

        long start = System.nanoTime();
        assertThat(agent.doWork()).isEqualTo(StageAgent.SMALL_DUTY_CYCLE - 1);

        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(PAUSE_NANOS);
        assertThat(handled).hasSize(StageAgent.SMALL_DUTY_CYCLE - 1);
    }

    @Test
    void aCycleThatFoundNothingOrALineOfEventsReturnsAtOnce() {
        StageAgent agent = agentPolling(PAUSE_NANOS);

        long start = System.nanoTime();
        assertThat(agent.doWork()).isZero();
        publish(StageAgent.SMALL_DUTY_CYCLE);
        assertThat(agent.doWork()).isEqualTo(StageAgent.SMALL_DUTY_CYCLE);

        assertThat(System.nanoTime() - start).isLessThan(PAUSE_NANOS);
        assertThat(handled).hasSize(StageAgent.SMALL_DUTY_CYCLE);
    }

    @Test
    void aZeroPauseNeverPauses() {
        StageAgent agent = agentPolling(0);
        publish(1);

        long start = System.nanoTime();
        assertThat(agent.doWork()).isEqualTo(1);

        assertThat(System.nanoTime() - start).isLessThan(PAUSE_NANOS);
        assertThat(handled).containsExactly(0L);
    }
}
