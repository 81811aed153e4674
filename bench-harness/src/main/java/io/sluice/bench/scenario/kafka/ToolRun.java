package io.sluice.bench.scenario.kafka;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One run of a load tool (Sluice's {@code perf-produce}/{@code perf-consume}, Kafka's {@code ProducerPerformance}/
 * {@code ConsumerPerformance}) in a child JVM, bounded by a deadline. The JVM is started by {@code bash}, which
 * writes its own children's CPU times ({@code times}: user and system seconds of the tool's JVM, all its threads,
 * start-up included) to a file once the tool has exited; stdout and stderr go to files in the run's directory.
 *
 * @param stdout     everything the tool printed on stdout
 * @param exitCode   the tool's exit status
 * @param cpuSeconds user + system CPU seconds of the tool's JVM
 * @param wallNanos  from start to exit, JVM start-up included
 */
record ToolRun(String stdout, int exitCode, double cpuSeconds, long wallNanos) {
    private static final Pattern TIMES = Pattern.compile("(\\d+)m([\\d.]+)s\\s+(\\d+)m([\\d.]+)s");

    /**
     * Runs {@code command} to its end, at most {@code deadline}; throws {@link IllegalStateException} with the tail of
     * its output when it does not exit in time (the process is killed) or its CPU times cannot be read.
     */
    static ToolRun run(String name, List<String> command, Path dir, Duration deadline) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Path out = dir.resolve(name + ".out");
        Path err = dir.resolve(name + ".err");
        Path times = dir.resolve(name + ".times");
        List<String> cmd = new ArrayList<>(List.of("bash", "-c", "\"$@\"; rc=$?; times > \"$PEER_TIMES\"; exit $rc", name));
        cmd.addAll(command);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().put("PEER_TIMES", times.toAbsolutePath().toString());
        long start = System.nanoTime();
        Process p = pb.start();
        if (!p.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
            throw new IllegalStateException(name + " did not finish within " + deadline + "; its output ends with:\n"
                    + tail(out) + "\n" + tail(err));
        }
        long wall = System.nanoTime() - start;
        String stdout = Files.readString(out, StandardCharsets.UTF_8);
        double cpu = childCpuSeconds(Files.exists(times) ? Files.readString(times, StandardCharsets.US_ASCII) : "");
        if (Double.isNaN(cpu)) {
            throw new IllegalStateException(name + ": no CPU times from bash in " + times + "; stderr ends with:\n" + tail(err));
        }
        return new ToolRun(stdout, p.exitValue(), cpu, wall);
    }

    /**
     * The children's user + system seconds from bash's {@code times} output (two lines: the shell's own times, then
     * its children's), or NaN when the text has no second line of times.
     */
    static double childCpuSeconds(String timesOutput) {
        Matcher m = TIMES.matcher(timesOutput);
        double children = Double.NaN;
        int line = 0;
        while (m.find()) {
            line++;
            if (line == 2) {
                children = Long.parseLong(m.group(1)) * 60 + Double.parseDouble(m.group(2))
                        + Long.parseLong(m.group(3)) * 60 + Double.parseDouble(m.group(4));
            }
        }
        return children;
    }

    /** The last lines of a file, for error messages. */
    static String tail(Path file) {
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
        } catch (IOException | RuntimeException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }
}
