package io.sluice.bench.scenario.kafka;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A broker (Sluice's or Kafka's) in a child JVM: started with a command line in its directory, output to
 * {@code broker.log}, its CPU time readable while it runs, stopped by SIGTERM (SIGKILL after 30 s) on
 * {@link #close()}, and killed by a shutdown hook if the benchmark JVM exits first. One per side; not thread-safe.
 */
final class PeerBroker implements AutoCloseable {
    private static final Duration STOP_DEADLINE = Duration.ofSeconds(30);

    private final String name;
    private final Path dir;
    private final Process process;
    private final Thread hook;

    private PeerBroker(String name, Path dir, Process process) {
        this.name = name;
        this.dir = dir;
        this.process = process;
        this.hook = new Thread(() -> {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }, "sluice-bench-" + name + "-kill");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Starts {@code command} in {@code dir}; the caller waits for readiness (topic creation retried to a deadline). */
    static PeerBroker start(String name, List<String> command, Path dir) throws IOException {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(dir.resolve("broker.log").toFile()).start();
        return new PeerBroker(name, dir, p);
    }

    String name() {
        return name;
    }

    /** Throws with the end of the broker's log when it has exited. */
    void checkAlive() {
        if (!process.isAlive()) {
            throw new IllegalStateException(name + " broker exited with status " + process.exitValue()
                    + "; its log ends with:\n" + logTail());
        }
    }

    String logTail() {
        return ToolRun.tail(dir.resolve("broker.log"));
    }

    /**
     * User + system CPU seconds the broker's JVM has used so far (all its threads): {@code /proc/<pid>/stat}
     * ({@link ProcStat}) on Linux, else what the JDK reports.
     */
    double cpuSeconds() {
        checkAlive();
        if (ProcStat.available(process.pid())) {
            try {
                return ProcStat.cpuSeconds(process.pid());
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("reading /proc/" + process.pid() + "/stat of " + name + "'s broker", e);
            }
        }
        return process.toHandle().info().totalCpuDuration()
                .orElseThrow(() -> new IllegalStateException("the OS does not report the CPU time of " + name + "'s broker"))
                .toNanos() / 1e9;
    }

    @Override
    public void close() throws InterruptedException {
        try {
            if (process.isAlive()) {
                process.destroy();
                if (!process.waitFor(STOP_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(STOP_DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
                }
            }
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running or about to: it kills the process anyway
            }
        }
    }
}
