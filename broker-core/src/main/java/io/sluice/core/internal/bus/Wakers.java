package io.sluice.core.internal.bus;

import com.lmax.disruptor.Sequence;
import com.lmax.disruptor.SequenceBarrier;
import com.lmax.disruptor.WaitStrategy;

import java.util.Arrays;

/**
 * The agents to wake when a sequence they follow moves: the ring's cursor (its journal writer, or the subscribers of a
 * memory-only topic) or a journal writer's progress (the subscribers of a journaled topic). As the ring's
 * {@link WaitStrategy} it is told of every publish; nobody waits on it, stages are polled ({@link PolledStage}).
 * Copy-on-write: waking is a volatile read and a loop over a handful of agents, each one volatile read unless parked.
 * An agent serving two of the stages is listed twice, once per stage.
 *
 * <p>Every publish reads the array, so it is padded with {@link #PAD} empty slots on both sides: it is allocated next
 * to the stage it was extended for, whose per-event writes would otherwise share its cache line (false sharing made
 * a 15,000-event burst several times slower before the padding).
 */
final class Wakers implements WaitStrategy {
    /** Empty slots before and after the agents: 16 references are at least 64 bytes, a cache line. */
    private static final int PAD = 16;

    private volatile StageAgent[] agents = new StageAgent[2 * PAD];
    private int count;
    /**
     * A stage a publisher may run on its own thread (the journal writer, {@link PartitionRing#tryPublishBatch}): while
     * anyone polls it, nobody is woken, since the holder re-checks for work when it lets go ({@link PolledStage#release}).
     * Set once, before the ring is used.
     */
    private volatile PolledStage skipWhileHeld;

    void skipWhileHeld(PolledStage stage) {
        this.skipWhileHeld = stage;
    }

    synchronized void add(StageAgent agent) {
        StageAgent[] more = new StageAgent[count + 1 + 2 * PAD];
        System.arraycopy(agents, PAD, more, PAD, count);
        more[PAD + count] = agent;
        count++;
        agents = more;
    }

    synchronized void remove(StageAgent agent) {
        int i = Arrays.asList(agents).subList(PAD, PAD + count).indexOf(agent);
        if (i >= 0) {
            StageAgent[] less = new StageAgent[count - 1 + 2 * PAD];
            System.arraycopy(agents, PAD, less, PAD, i);
            System.arraycopy(agents, PAD + i + 1, less, PAD + i, count - i - 1);
            count--;
            agents = less;
        }
    }

    void wakeAll() {
        PolledStage gate = skipWhileHeld;
        if (gate != null && gate.isHeld()) {
            return;
        }
        StageAgent[] current = agents;
        for (int i = PAD; i < current.length - PAD; i++) {
            current[i].wake();
        }
    }

    @Override
    public void signalAllWhenBlocking() {
        wakeAll();
    }

    @Override
    public long waitFor(long sequence, Sequence cursor, Sequence dependentSequence, SequenceBarrier barrier) {
        throw new UnsupportedOperationException("a Sluice ring is polled by its stages' agents, not waited on");
    }
}
