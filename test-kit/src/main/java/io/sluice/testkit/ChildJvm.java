package io.sluice.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Starts a main class in a child JVM with the test's class path and Sluice's JVM flags (Chronicle opens and
 * no-telemetry properties, from the {@code sluice.jvm.args} system property set by the build), so crash tests can
 * SIGKILL a real process. Reads the child's stdout line by line.
 */
public final class ChildJvm implements AutoCloseable {
    private final Process process;
    private final BufferedReader stdout;

    private ChildJvm(Process process) {
        this.process = process;
        this.stdout = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    public static ChildJvm start(Class<?> mainClass, String... args) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command("256m", mainClass, args)).redirectError(ProcessBuilder.Redirect.INHERIT);
        return new ChildJvm(pb.start());
    }

    /**
     * The command line that runs {@code mainClass} in a child JVM with the test's class path, the given max heap and
     * Sluice's JVM flags (Chronicle opens from {@code sluice.jvm.args}, and no telemetry).
     */
    public static List<String> command(String maxHeap, Class<?> mainClass, String... args) {
        return command(maxHeap, mainClass.getName(), args);
    }

    /** As {@link #command(String, Class, String...)} for a main class named only (a test-scoped dependency's). */
    public static List<String> command(String maxHeap, String mainClass, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx" + maxHeap);
        String jvmArgs = System.getProperty("sluice.jvm.args", "");
        for (String a : jvmArgs.trim().split("\\s+")) {
            if (!a.isEmpty()) {
                cmd.add(a);
            }
        }
        cmd.add("-Dchronicle.analytics.disable=true");
        cmd.add("-Dchronicle.announcer.disable=true");
        if (Runtime.version().feature() >= 22) {
            // Netty loads its epoll library: without this, JDK 22+ prints a restricted-method warning on stderr
            // (what `sluice.jar`'s manifest entry Enable-Native-Access does for `java -jar`)
            cmd.add("--enable-native-access=ALL-UNNAMED");
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(mainClass);
        cmd.addAll(Arrays.asList(args));
        return cmd;
    }

    /** The next stdout line, or null at end of stream. */
    public String readLine() throws IOException {
        return stdout.readLine();
    }

    /** SIGKILL: no shutdown hooks, no flushing — a crash. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    public int waitFor(long seconds) throws InterruptedException {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            throw new IllegalStateException("child JVM did not exit within " + seconds + " s");
        }
        return process.exitValue();
    }

    public static Path tempDirProperty() {
        return Paths.get(System.getProperty("java.io.tmpdir"));
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}
