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
    /**
     * A duty cycle that handled fewer events than this is small: 16 is one 64-byte cache line of the ring's int
     * availability flags, which a multi-producer ring keeps one per slot.
     */
    static final int SMALL_DUTY_CYCLE = 16;
    /** Spins between two reads of the clock while pausing (a read costs about two spins here). */
    private static final int SPINS_PER_CLOCK_READ = 8;

    private final String roleName;
    private final Queue<Runnable> commands = new ConcurrentLinkedQueue<>();
    private final WakeableIdleStrategy idle;
    private final long batchPauseNanos;
    /** Agent thread only; replaced, never changed in place, so a removal during a poll leaves the loop's copy intact. */
    private PolledStage[] stages = new PolledStage[0];
    /** Stages assigned (for balancing; any thread). */
    private volatile int load;
    private volatile boolean stopping;
    /** Set when {@link #onClose()} has released every stage: commands are no longer run. Guarded by this. */
    private boolean closed;
    volatile Thread thread;

    /** @param batchPauseNanos how long to pause after a small duty cycle ({@link #pauseForBatch}); 0: never */
    StageAgent(String roleName, WaitStrategyType waitStrategy, long batchPauseNanos) {
        if (batchPauseNanos < 0) {
            throw new IllegalArgumentException(roleName + ": batch pause must be >= 0, got " + batchPauseNanos);
        }
        this.roleName = roleName;
        this.idle = WakeableIdleStrategy.of(waitStrategy, this::hasWork);
        this.batchPauseNanos = batchPauseNanos;
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
        int events = 0;
        PolledStage[] current = stages;
        for (PolledStage stage : current) {
            events += stage.poll();
        }
        if (events > 0 && events < SMALL_DUTY_CYCLE && batchPauseNanos > 0) {
            pauseForBatch();
        }
        return work + events;
    }

    /**
     * Smart batching on the consuming side. A stage right behind its producers reads each slot, value and availability
     * flag just after it is written, and a producer's next write to the same cache line (the next slot's flag, a
     * neighbouring slot) must first take the line back from this thread's core: a core-to-core transfer per line, per
     * event, on the producer's path (80 to over 400 ns one way on this project's 2-vCPU machine). Pausing briefly after
     * a duty cycle that found only a few events lets the producers run ahead, so the next cycle reads whole lines of
     * their writes once. Events found are handled before the pause; an event published during it waits up to the pause
     * longer; a cycle that found nothing goes to the idle strategy as before, and one that found many polls again at
     * once. Measured in docs/benchmarks.md (issue 22, item 28).
     */
    private void pauseForBatch() {
        long deadline = System.nanoTime() + batchPauseNanos;
        do {
            for (int i = 0; i < SPINS_PER_CLOCK_READ; i++) {
                Thread.onSpinWait();
            }
        } while (System.nanoTime() - deadline < 0);
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
