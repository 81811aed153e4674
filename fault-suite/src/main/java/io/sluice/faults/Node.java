package io.sluice.faults;

import io.sluice.cli.SluiceCli;
import io.sluice.testkit.Await;
import io.sluice.testkit.ChildJvm;
import io.sluice.testkit.Signals;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One {@code sluice} command ({@code broker} or {@code ingest}) running as a real process in a child JVM, with the
 * same arguments on every (re)start, its output appended to {@code <name>.log} in the run directory. The nemesis
 * SIGKILLs, SIGSTOPs and SIGCONTs it; {@link #ensureRunning()} restarts it when it is down, as a supervisor would.
 *
 * <p>Thread-safety: every method is synchronized; the nemesis and the final healing are the only callers.
 */
public final class Node implements AutoCloseable {
    private static final Duration READY = Duration.ofSeconds(120);

    private final String name;
    private final Path log;
    private final String heap;
    private final List<String> args;
    private final Map<String, String> env;
    private final String readyLine;
    private Process process;
    private boolean paused;
    private int starts;
    private int failedStarts;

    /**
     * @param readyLine a line the command prints once it serves (searched in the log after each start)
     */
    public Node(String name, Path runDir, String heap, Map<String, String> env, String readyLine, String... args) {
        this.name = name;
        this.log = runDir.resolve(name + ".log");
        this.heap = heap;
        this.env = env;
        this.readyLine = readyLine;
        this.args = List.of(args);
    }

    public String name() {
        return name;
    }

    public Path log() {
        return log;
    }

    /**
     * Starts the process, trying again (as a supervisor would) when it exits before it is ready, at most
     * {@code attempts} times; the last failure is thrown.
     */
    public synchronized void start(int attempts) {
        for (int i = 1; ; i++) {
            try {
                start();
                return;
            } catch (IllegalStateException e) {
                failedStarts++;
                if (i >= attempts) {
                    throw e;
                }
            }
        }
    }

    /** Times the process exited before it was ready (for example a broker whose ingest section found ClickHouse slow). */
    public synchronized int failedStarts() {
        return failedStarts;
    }

    /** Starts the process and waits until it prints its ready line. */
    public synchronized void start() {
        if (isRunning()) {
            return;
        }
        long from;
        try {
            Files.createDirectories(log.getParent());
            from = Files.exists(log) ? Files.size(log) : 0;
            ProcessBuilder pb = new ProcessBuilder(ChildJvm.command(heap, SluiceCli.class, args.toArray(String[]::new)))
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
            pb.environment().remove("SLUICE_AUTH_TOKEN");
            pb.environment().putAll(env);
            process = pb.start();
            paused = false;
            starts++;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name, e);
        }
        Process started = process;
        Await.until(() -> name + " printed '" + readyLine + "' (see " + log + ")", READY, () -> {
            if (!started.isAlive()) {
                throw new IllegalStateException(name + " exited with " + started.exitValue() + " while starting; see " + log);
            }
            return logSince(from).contains(readyLine);
        });
    }

    /** The log from byte {@code from} on, at most 1 MiB of it (the ready line comes early). */
    private String logSince(long from) {
        try (java.nio.channels.SeekableByteChannel ch = Files.newByteChannel(log)) {
            long n = Math.min(ch.size() - from, 1 << 20);
            if (n <= 0) {
                return "";
            }
            java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate((int) n);
            ch.position(from);
            while (buf.hasRemaining() && ch.read(buf) > 0) {
                // read what is there
            }
            return new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** The exit code if the process ended (by itself or killed), else null. */
    public synchronized Integer exitCode() {
        return process != null && !process.isAlive() ? process.exitValue() : null;
    }

    public synchronized long pid() {
        return isRunning() ? process.pid() : -1;
    }

    public synchronized int starts() {
        return starts;
    }

    /** Resident memory of the process in bytes (VmRSS), -1 when it is not running. */
    public synchronized long residentBytes() {
        return isRunning() ? Signals.residentBytes(process.pid()) : -1;
    }

    /** SIGKILL, waiting for the process to be gone. */
    public synchronized void kill() {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        paused = false;
    }

    public synchronized void pause() {
        if (isRunning() && Signals.send(process.pid(), "STOP")) {
            paused = true;
        }
    }

    public synchronized void resume() {
        if (isRunning() && paused) {
            Signals.send(process.pid(), "CONT");
        }
        paused = false;
    }

    /** Resumes a paused process and restarts a dead one; true if it had to be restarted. */
    public synchronized boolean ensureRunning() {
        resume();
        if (isRunning()) {
            return false;
        }
        start(3);
        return true;
    }

    /** SIGTERM, then SIGKILL if it does not exit within 30 s. */
    @Override
    public synchronized void close() {
        if (process == null) {
            return;
        }
        resume();
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(30, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
