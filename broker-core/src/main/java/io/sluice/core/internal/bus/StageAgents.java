package io.sluice.core.internal.bus;

import io.sluice.core.BrokerConfig;
import io.sluice.core.SluiceException;
import io.sluice.core.WaitStrategyType;
import io.sluice.core.internal.NamedThreadFactory;
import org.agrona.concurrent.AgentRunner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A fixed number of threads that share the work of many partitions (Agrona {@link AgentRunner}s, one
 * {@link StageAgent} each): the broker has one group for journal writers ({@code journal.threads}) and one for live
 * subscribers ({@code subscriber.threads}), instead of a thread per partition and per subscriber. A new stage goes to
 * the agent with the fewest; a thread starts with its first stage, and waits (per the wait strategy) without a timer
 * while its partitions are idle.
 */
public final class StageAgents implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StageAgents.class);
    private static final long AWAIT_SECONDS = 10;

    private final String role;
    private final StageAgent[] agents;
    private final AgentRunner[] runners;
    private boolean closed;

    /** As below, with the broker's default pause after a small duty cycle ({@code bus.batch.pause.ns}). */
    public StageAgents(String role, int threads, WaitStrategyType waitStrategy) {
        this(role, threads, waitStrategy, BrokerConfig.DEFAULT_BUS_BATCH_PAUSE_NANOS);
    }

    /**
     * @param role             thread name prefix: thread {@code i} is {@code <role>-<i>}
     * @param threads          how many threads at most
     * @param batchPauseNanos  the pause after a duty cycle that handled few events ({@link StageAgent#SMALL_DUTY_CYCLE})
     */
    public StageAgents(String role, int threads, WaitStrategyType waitStrategy, long batchPauseNanos) {
        if (threads < 1) {
            throw new IllegalArgumentException(role + ": at least one thread, got " + threads);
        }
        this.role = role;
        this.agents = new StageAgent[threads];
        this.runners = new AgentRunner[threads];
        for (int i = 0; i < threads; i++) {
            agents[i] = new StageAgent(role + "-" + i, waitStrategy, batchPauseNanos);
        }
    }

    /** Assigns the stage to the least loaded thread (starting it if need be); returns that agent, for waking and removal. */
    synchronized StageAgent assign(PolledStage stage) {
        if (closed) {
            throw new SluiceException.ClosedException(role + " threads are closed");
        }
        int best = 0;
        for (int i = 1; i < agents.length; i++) {
            if (agents[i].load() < agents[best].load()) {
                best = i;
            }
        }
        StageAgent agent = agents[best];
        if (runners[best] == null) {
            AgentRunner runner = new AgentRunner(agent.idleStrategy(),
                    t -> LOG.error("{}: unexpected failure", agent.roleName(), t), null, agent);
            runners[best] = runner;
            AgentRunner.startOnThread(runner, new NamedThreadFactory(agent.roleName()));
        }
        agent.add(stage);
        return agent;
    }

    /** Threads started so far (for tests and metrics). */
    public synchronized int started() {
        int n = 0;
        for (AgentRunner r : runners) {
            n += r == null ? 0 : 1;
        }
        return n;
    }

    /**
     * Stops the threads; stages still assigned are told {@link PolledStage#removed()} on their thread. Close the
     * partitions first: this does not drain them. Never interrupts a thread (it may be writing a mapped journal file).
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = 0; i < agents.length; i++) {
            if (runners[i] != null) {
                agents[i].stop();
                String name = agents[i].roleName();
                runners[i].close((int) TimeUnit.SECONDS.toMillis(AWAIT_SECONDS),
                        t -> LOG.warn("{} did not stop within {} s; interrupting it", name, AWAIT_SECONDS));
            }
        }
    }

    static void await(CompletableFuture<Void> done, String what) {
        try {
            done.get(AWAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("{}: not acknowledged within {} s", what, AWAIT_SECONDS);
        }
    }
}
