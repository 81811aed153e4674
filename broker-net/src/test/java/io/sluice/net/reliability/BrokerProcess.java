package io.sluice.net.reliability;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A broker in a child JVM, so a test can SIGKILL it, read its memory and its log. The child gets the test's class
 * path and Sluice's JVM flags (the {@code sluice.jvm.args} system property: Chronicle opens, no telemetry), stdout is
 * read line by line on a daemon thread (so the child never blocks on a full pipe), stderr (the SLF4J log) goes to a
 * file the test can search, and stdin carries commands (see {@link StatsBroker}).
 */
final class BrokerProcess implements AutoCloseable {
    private static final String EOF = "\u0000EOF";

    private final Process process;
    private final Path stderr;
    private final Writer stdin;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();

    private BrokerProcess(Process process, Path stderr) {
        this.process = process;
        this.stderr = stderr;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread pump = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the child died: the end-of-stream marker below tells the waiting test
            } finally {
                lines.add(EOF);
            }
        }, "broker-process-stdout-" + process.pid());
        pump.setDaemon(true);
        pump.start();
    }

    /** Starts {@code mainClass} with {@code args}, heap capped at {@code maxHeap} (for example "256m"). */
    static BrokerProcess start(Class<?> mainClass, Path stderrFile, String maxHeap, String... args) throws IOException {
        return start(mainClass, stderrFile, maxHeap, java.util.Map.of(), args);
    }

    /**
     * As {@link #start(Class, Path, String, String...)} with environment changes: a null value removes the variable
     * (the child never inherits a {@code SLUICE_AUTH_TOKEN} from the build's environment).
     */
    static BrokerProcess start(Class<?> mainClass, Path stderrFile, String maxHeap, java.util.Map<String, String> env,
                               String... args) throws IOException {
        return start(mainClass, stderrFile, maxHeap, List.of(), env, args);
    }

    /**
     * As {@link #start(Class, Path, String, java.util.Map, String...)} with extra JVM options (placed right after
     * {@code -Xmx}), for example {@code -Xms256m -XX:+AlwaysPreTouch} to make the heap resident up front.
     */
    static BrokerProcess start(Class<?> mainClass, Path stderrFile, String maxHeap, List<String> jvmOptions,
                               java.util.Map<String, String> env, String... args) throws IOException {
        List<String> cmd = new java.util.ArrayList<>(io.sluice.testkit.ChildJvm.command(maxHeap, mainClass, args));
        cmd.addAll(2, jvmOptions);
        Files.createDirectories(stderrFile.getParent());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(stderrFile.toFile()));
        pb.environment().remove("SLUICE_AUTH_TOKEN");
        env.forEach((k, v) -> {
            if (v == null) {
                pb.environment().remove(k);
            } else {
                pb.environment().put(k, v);
            }
        });
        Process p = pb.start();
        return new BrokerProcess(p, stderrFile);
    }

    /** A loopback port that was free a moment ago (the broker binds it with SO_REUSEADDR, also after a restart). */
    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /**
     * The first stdout line matching {@code pattern} within {@code timeout}; fails if the child exits first or the
     * deadline passes (the message carries the child's log).
     */
    Matcher awaitLine(Pattern pattern, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
            if (line == null) {
                throw new AssertionError("no line matching '" + pattern + "' within " + timeout + "; broker log:\n" + logTail());
            }
            if (line.equals(EOF)) {
                lines.add(EOF);
                throw new AssertionError("broker exited before printing '" + pattern + "'; broker log:\n" + logTail());
            }
            Matcher m = pattern.matcher(line);
            if (m.find()) {
                return m;
            }
        }
    }

    /** Sends one command line to the child's stdin. */
    void command(String line) throws IOException {
        stdin.write(line);
        stdin.write('\n');
        stdin.flush();
    }

    /** SIGKILL: no shutdown hook, no flush, no unmapping — a crash. Returns once the process is gone. */
    void sigkill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("broker " + pid() + " still alive 30 s after SIGKILL");
        }
    }

    /** SIGTERM (graceful shutdown) and wait for exit. */
    int sigterm(Duration timeout) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("broker " + pid() + " did not exit within " + timeout + " of SIGTERM");
        }
        return process.exitValue();
    }

    /** The child's stderr (its log) so far. */
    String log() {
        try {
            return Files.readString(stderr, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private String logTail() {
        String log = log();
        return log.length() > 4000 ? "..." + log.substring(log.length() - 4000) : log;
    }

    /** Resident set size of the child from /proc (kB), or -1 where /proc is not available. */
    long rssKb() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc", Long.toString(pid()), "status"))) {
                if (l.startsWith("VmRSS:")) {
                    return Long.parseLong(l.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return -1;
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            sigkill();
        }
    }
}
