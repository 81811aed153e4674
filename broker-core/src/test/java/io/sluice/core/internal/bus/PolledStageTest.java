package io.sluice.core.internal.bus;

import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.RingBuffer;
import io.sluice.core.WaitStrategyType;
import io.sluice.testkit.Await;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

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

    /**
     * A turn reads no cursor: it finds the published slots from their availability flags alone. The slots past the last
     * published one still hold an earlier lap's flags, and a turn larger than the ring stops at one lap.
     */
    @Test
    void aTurnFindsThePublishedSlotsFromTheirFlagsAloneLapAfterLap() {
        int ringSize = ring.getBufferSize();
        PolledStage stage = new PolledStage("test", ring, ring::getCursor, true, recorder, 4 * ringSize, null);
        ring.addGatingSequences(stage.sequence());
        long published = 0;
        for (int lap = 0; lap < 5; lap++) {
            for (int i = 0; i < ringSize; i++) {
                ring.publish(ring.next());
            }
            published += ringSize;
            assertThat(stage.poll()).as("a full ring in one turn, lap %d", lap).isEqualTo(ringSize);

            for (int i = 0; i < 10; i++) {
                ring.publish(ring.next());
            }
            published += 10;
            assertThat(stage.poll()).as("ten events, then slots holding the last lap's flags").isEqualTo(10);

            long claimed = ring.next();
            assertThat(stage.poll()).as("a claimed slot not yet published").isZero();
            assertThat(stage.hasWork()).as("the check before parking sees the claim").isTrue();
            ring.publish(claimed);
            published++;
            assertThat(stage.poll()).isEqualTo(1);
            assertThat(stage.hasWork()).isFalse();
        }
        assertThat(handled).hasSize((int) published);
        for (int i = 0; i < handled.size(); i++) {
            assertThat(handled.get(i)).isEqualTo(i);
        }
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

    /**
     * A publisher running the journal writer on its own thread ({@link PolledStage#tryHold}) owns what waits behind
     * it until it lets go: the agent's poll leaves the stage alone and its idle check counts no work there.
     */
    @Test
    void aHeldStageHasNoWorkForItsAgentUntilTheHolderLetsGo() {
        PolledStage stage = new PolledStage("held", ring, ring::getCursor, true, recorder, MAX_BATCH, null, true);
        ring.addGatingSequences(stage.sequence());
        assertThat(stage.tryHold()).isTrue();
        ring.publish(ring.next());

        assertThat(stage.hasWork()).as("the holder re-checks when it lets go").isFalse();
        assertThat(stage.poll()).isZero();
        assertThat(stage.isHeld()).as("the agent's poll did not take or drop the holder's flag").isTrue();
        assertThat(handled).isEmpty();

        assertThat(stage.release()).as("work left for the agent").isTrue();
        assertThat(stage.hasWork()).isTrue();
        assertThat(stage.poll()).isEqualTo(1);
        assertThat(handled).containsExactly(0L);
        assertThat(stage.hasWork()).isFalse();
    }

    /**
     * The agent thread of a held stage with events behind it parks (it used to spin through its idle cycles without
     * ever parking for as long as the stage stayed held: on a 2-core machine, the CPU the holders needed) and is
     * woken by the holder's re-check when it lets go, then handles those events.
     */
    @Test
    void anAgentParksWhileACallerHoldsItsStageAndIsWokenWhenTheCallerLetsGo() {
        List<Long> handledByAgent = new CopyOnWriteArrayList<>();
        PolledStage stage = new PolledStage("held", ring, ring::getCursor, true,
                (slot, sequence, endOfBatch) -> handledByAgent.add(sequence), MAX_BATCH, null, true);
        ring.addGatingSequences(stage.sequence());
        try (StageAgents agents = new StageAgents("test-agent", 1, WaitStrategyType.SLEEPING)) {
            StageAgent agent = agents.assign(stage);
            Await.until("the agent thread started", Duration.ofSeconds(10), () -> agent.thread != null);
            assertThat(stage.tryHold()).isTrue();
            boolean wake;
            try {
                ring.publish(ring.next());
                ring.publish(ring.next());
                agent.wake(); // as if it had been woken for other work: it finds the stage held
                // parked, and staying parked: a thread unparked but not yet running still reads WAITING for a moment
                Await.until(() -> "the agent parked while the stage is held; its state: " + agent.thread.getState(),
                        Duration.ofSeconds(10), () -> staysParked(agent.thread, Duration.ofMillis(50)));
                assertThat(handledByAgent).isEmpty();
            } finally {
                wake = stage.release(); // also on failure: closing the agent waits for the stage to be let go
            }
            assertThat(wake).as("work left for the agent").isTrue();
            agent.wake(); // as PartitionRing#journalHeldAndRelease does
            Await.until(() -> "the agent handled both events: " + handledByAgent, Duration.ofSeconds(10),
                    () -> handledByAgent.size() == 2);
            assertThat(handledByAgent).containsExactly(0L, 1L);
        }
    }

    private static boolean staysParked(Thread thread, Duration window) {
        long end = System.nanoTime() + window.toNanos();
        do {
            if (thread.getState() != Thread.State.WAITING) {
                return false;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        } while (System.nanoTime() - end < 0);
        return true;
    }
}
