package io.sluice.core.internal.bus;

import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.RingBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A {@link PolledStage} turn: published slots only, in order, at most {@code maxBatch} of them, the last one ending the batch. */
class PolledStageTest {
    private static final int MAX_BATCH = 4;

    private final RingBuffer<RingSlot> ring = RingBuffer.createMultiProducer(RingSlot::new, 64, new Wakers());
    private final List<Long> handled = new ArrayList<>();
    private final List<Long> endsOfBatch = new ArrayList<>();
    private final EventHandler<RingSlot> recorder = (slot, sequence, endOfBatch) -> {
        handled.add(sequence);
        if (endOfBatch) {
            endsOfBatch.add(sequence);
        }
    };

    private PolledStage followingProducers() {
        PolledStage stage = new PolledStage("test", ring, ring::getCursor, true, recorder, MAX_BATCH, null);
        ring.addGatingSequences(stage.sequence());
        return stage;
    }

    @Test
    void aSlotPublishedOutOfOrderWaitsForTheSlotsBeforeIt() {
        PolledStage stage = followingProducers();
        long first = ring.next();
        long second = ring.next();
        ring.publish(second);

        assertThat(stage.hasWork()).isTrue();
        assertThat(stage.poll()).isZero();
        assertThat(handled).isEmpty();

        ring.publish(first);
        assertThat(stage.poll()).isEqualTo(2);
        assertThat(handled).containsExactly(first, second);
        assertThat(endsOfBatch).containsExactly(second);
        assertThat(stage.sequence().get()).isEqualTo(second);
        assertThat(stage.hasWork()).isFalse();
    }

    @Test
    void aTurnHandlesAtMostMaxBatchEventsAndEndsItsBatchThere() {
        PolledStage stage = followingProducers();
        for (int i = 0; i < 10; i++) {
            ring.publish(ring.next());
        }

        assertThat(stage.poll()).isEqualTo(MAX_BATCH);
        assertThat(stage.poll()).isEqualTo(MAX_BATCH);
        assertThat(stage.poll()).isEqualTo(2);
        assertThat(stage.poll()).isZero();
        assertThat(handled).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
        assertThat(endsOfBatch).containsExactly(3L, 7L, 9L);
    }

    @Test
    void aStageFollowingAnotherStageStopsAtItsSequence() {
        PolledStage first = followingProducers();
        PolledStage second = new PolledStage("after", ring, first.sequence()::get, false, recorder, MAX_BATCH, null);
        ring.addGatingSequences(second.sequence());
        for (int i = 0; i < 3; i++) {
            ring.publish(ring.next());
        }

        assertThat(second.poll()).isZero();
        assertThat(first.poll()).isEqualTo(3);
        assertThat(second.poll()).isEqualTo(3);
        assertThat(handled).containsExactly(0L, 1L, 2L, 0L, 1L, 2L);
    }

    @Test
    void aFailingHandlerSkipsTheEventAndTheTurnGoesOn() {
        EventHandler<RingSlot> failing = (slot, sequence, endOfBatch) -> {
            if (sequence == 1) {
                throw new IllegalStateException("expected by the test");
            }
            handled.add(sequence);
        };
        PolledStage stage = new PolledStage("failing", ring, ring::getCursor, true, failing, MAX_BATCH, null);
        ring.addGatingSequences(stage.sequence());
        for (int i = 0; i < 3; i++) {
            ring.publish(ring.next());
        }

        assertThat(stage.poll()).isEqualTo(3);
        assertThat(handled).containsExactly(0L, 2L);
    }
}
