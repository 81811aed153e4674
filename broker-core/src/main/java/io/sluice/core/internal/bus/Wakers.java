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
 */
final class Wakers implements WaitStrategy {
    private volatile StageAgent[] agents = new StageAgent[0];

    synchronized void add(StageAgent agent) {
        StageAgent[] more = Arrays.copyOf(agents, agents.length + 1);
        more[agents.length] = agent;
        agents = more;
    }

    synchronized void remove(StageAgent agent) {
        int i = Arrays.asList(agents).indexOf(agent);
        if (i >= 0) {
            StageAgent[] less = new StageAgent[agents.length - 1];
            System.arraycopy(agents, 0, less, 0, i);
            System.arraycopy(agents, i + 1, less, i, agents.length - i - 1);
            agents = less;
        }
    }

    void wakeAll() {
        for (StageAgent agent : agents) {
            agent.wake();
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
