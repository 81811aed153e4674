package io.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A private server process for tests: a command line, a temporary directory, start/stop/kill, and a readiness
 * probe polled with a deadline (never a fixed sleep). Subclasses write the server's config into the directory.
 */
abstract class ServerProcess implements AutoCloseable {
    private static final Duration READY_DEADLINE = Duration.ofSeconds(60);
    private static final Duration STOP_DEADLINE = Duration.ofSeconds(30);

    protected final String name;
    protected final Path dir;
    private Process process;

    ServerProcess(String name) {
        this(name, null);
    }

    /** @param parent where the server's temporary directory goes; null for the system's temporary directory */
    ServerProcess(String name, Path parent) {
        this.name = name;
        try {
            this.dir = parent == null ? Files.createTempDirectory("sluice-" + name + "-")
                    : Files.createTempDirectory(Files.createDirectories(parent), "sluice-" + name + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(this::destroyQuietly, "sluice-" + name + "-shutdown"));
    }

    /** The command that runs the server in the foreground. */
    protected abstract List<String> command();

    /** True once the server answers on its port. Must not throw. */
    protected abstract boolean isReady();

    /** How long {@link #start()} waits for {@link #isReady()} (JVM servers on a loaded machine need longer). */
    protected Duration readyDeadline() {
        return READY_DEADLINE;
    }

    /** The last lines of the server's output, for failure messages (the directory is deleted on close). */
    protected String logTail() {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("stdout.log"));
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(no log: " + e + ")";
        }
    }

    public Path dir() {
        return dir;
    }

    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** Starts the server (same ports, same data) and waits until it answers. */
    public synchronized void start() {
        if (isRunning()) {
            return;
        }
        try {
            process = new ProcessBuilder(command())
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("stdout.log").toFile()))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + ": " + command(), e);
        }
        Process started = process;
        io.sluice.testkit.Await.until(() -> name + " ready; its log ends with:\n" + logTail(), readyDeadline(), () -> {
            if (!started.isAlive()) {
                throw new IllegalStateException(name + " exited with " + started.exitValue() + "; see " + dir.resolve("stdout.log"));
            }
            return isReady();
        });
    }

    /** Graceful stop (SIGTERM), waiting for the process to exit. */
    public synchronized void stop() {
        if (process == null) {
            return;
        }
        process.destroy();
        waitExit();
    }

    /** Hard stop (SIGKILL): the server gets no chance to flush anything. */
    public synchronized void kill() {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        waitExit();
    }

    /** The server's process id, or -1 when it is not running. */
    public synchronized long pid() {
        return process != null && process.isAlive() ? process.pid() : -1;
    }

    /** SIGSTOP: the server keeps its sockets open and answers nothing until {@link #resume()}. */
    public synchronized void pause() {
        signal("STOP");
    }

    /** SIGCONT after {@link #pause()}. */
    public synchronized void resume() {
        signal("CONT");
    }

    private void signal(String sig) {
        if (process != null && process.isAlive()) {
            Signals.send(process.pid(), sig);
        }
    }

    public void restart() {
        stop();
        start();
    }

    private void waitExit() {
        try {
            if (!process.waitFor(STOP_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(STOP_DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while stopping " + name, e);
        }
        process = null;
    }

    private void destroyQuietly() {
        Process p = process;
        if (p != null) {
            p.destroyForcibly();
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        deleteTree(dir);
    }

    @Override
    public void close() {
        stop();
        deleteTree(dir);
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** True if one of the candidates is installed. */
    static boolean isInstalled(String... candidates) {
        try {
            findBinary(candidates);
            return true;
        } catch (IllegalStateException e) {
            return false;
        }
    }

    static Path findBinary(String... candidates) {
        for (String c : candidates) {
            Path p = Path.of(c);
            if (p.isAbsolute() && Files.isExecutable(p)) {
                return p;
            }
            String pathEnv = System.getenv().getOrDefault("PATH", "");
            for (String d : pathEnv.split(java.io.File.pathSeparator)) {
                Path q = Path.of(d, c);
                if (Files.isExecutable(q)) {
                    return q;
                }
            }
        }
        throw new IllegalStateException("none of " + List.of(candidates) + " is installed (scripts/test.sh installs them)");
    }

    static void deleteTree(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // best effort: a leftover temp dir is not a test failure
        }
    }
}
