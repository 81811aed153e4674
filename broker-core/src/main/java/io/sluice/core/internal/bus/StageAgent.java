package io.sluice.core.internal.bus;

import io.sluice.core.WaitStrategyType;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;

import java.util.Arrays;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * One shared thread's work (Aeron's SHARED threading mode): it polls every stage assigned to it in turn, each up to its
 * batch cap, so one busy partition cannot starve the others. Stages are added and removed by commands the agent runs
 * on its own thread, between polls: a stage is never polled after its removal has been acknowledged, and its
 * {@link PolledStage#removed()} runs on the thread that polled it (the journal writer's appender is closed by the
 * thread that used it).
 */
final class StageAgent implements Agent {
    private final String roleName;
    private final Queue<Runnable> commands = new ConcurrentLinkedQueue<>();
    private final WakeableIdleStrategy idle;
    /** Agent thread only; replaced, never changed in place, so a removal during a poll leaves the loop's copy intact. */
    private PolledStage[] stages = new PolledStage[0];
    /** Stages assigned (for balancing; any thread). */
    private volatile int load;
    private volatile boolean stopping;
    /** Set when {@link #onClose()} has released every stage: commands are no longer run. Guarded by this. */
    private boolean closed;
    volatile Thread thread;

    StageAgent(String roleName, WaitStrategyType waitStrategy) {
        this.roleName = roleName;
        this.idle = WakeableIdleStrategy.of(waitStrategy, this::hasWork);
    }

    WakeableIdleStrategy idleStrategy() {
        return idle;
    }

    @Override
    public void onStart() {
        thread = Thread.currentThread();
    }

    @Override
    public int doWork() {
        if (stopping) {
            throw new AgentTerminationException(true);
        }
        int work = 0;
        Runnable command;
        while ((command = commands.poll()) != null) {
            command.run();
            work++;
        }
        PolledStage[] current = stages;
        for (PolledStage stage : current) {
            work += stage.poll();
        }
        return work;
    }

    /** Agent thread, just before it parks. */
    private boolean hasWork() {
        if (stopping || !commands.isEmpty()) {
            return true;
        }
        for (PolledStage stage : stages) {
            if (stage.hasWork()) {
                return true;
            }
        }
        return false;
    }

    /** Wakes the thread if it is parked. Any thread; one volatile read when it is not. */
    void wake() {
        idle.wake();
    }

    int load() {
        return load;
    }

    /** The stage is polled from the agent's next duty cycle on. Any thread. */
    synchronized void add(PolledStage stage) {
        if (!submit(() -> stages = append(stages, stage))) {
            throw new IllegalStateException(roleName + " is closed");
        }
        load++;
    }

    /**
     * Stops polling the stage, runs its {@link PolledStage#removed()} on the agent's thread and returns when both are
     * done. On the agent's own thread (a subscriber closing itself from its callback) this happens at once; a closed
     * agent has already released its stages.
     */
    void remove(PolledStage stage) {
        synchronized (this) {
            load--;
        }
        if (Thread.currentThread() == thread) {
            removeNow(stage);
            return;
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        boolean submitted = submit(() -> {
            try {
                removeNow(stage);
            } finally {
                done.complete(null);
            }
        });
        if (submitted) {
            StageAgents.await(done, roleName + " removing " + stage);
        }
    }

    private void removeNow(PolledStage stage) {
        int i = Arrays.asList(stages).indexOf(stage);
        if (i < 0) {
            return;
        }
        PolledStage[] less = new PolledStage[stages.length - 1];
        System.arraycopy(stages, 0, less, 0, i);
        System.arraycopy(stages, i + 1, less, i, stages.length - i - 1);
        stages = less;
        stage.removed();
    }

    private synchronized boolean submit(Runnable command) {
        if (closed) {
            return false;
        }
        commands.add(command);
        wake();
        return true;
    }

    /** Asks the thread to leave its loop; {@link #onClose()} then runs what is still queued. */
    void stop() {
        stopping = true;
        wake();
    }

    @Override
    public void onClose() {
        synchronized (this) {
            closed = true;
        }
        Runnable command;
        while ((command = commands.poll()) != null) {
            command.run();
        }
        for (PolledStage stage : stages) {
            stage.removed();
        }
        stages = new PolledStage[0];
    }

    private static PolledStage[] append(PolledStage[] stages, PolledStage stage) {
        PolledStage[] more = Arrays.copyOf(stages, stages.length + 1);
        more[stages.length] = stage;
        return more;
    }

    @Override
    public String roleName() {
        return roleName;
    }
}
