package io.sluice.bench;

import io.sluice.bench.report.JsonLine;
import io.sluice.bench.report.MarkdownReport;
import io.sluice.bench.report.ScenarioResult;
import io.sluice.bench.report.Table;
import io.sluice.bench.report.TextTable;
import io.sluice.bench.scenario.EventBusScenario;
import io.sluice.bench.scenario.IngestStagesScenario;
import io.sluice.bench.scenario.MicroBenchmarksScenario;
import io.sluice.bench.scenario.StreamProcessorScenario;
import io.sluice.bench.scenario.redis.RedisE2eScenario;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The scenario harness: {@code bin/sluice-bench SCENARIO [--quick] [options]} runs one scenario and prints its
 * tables and one line of JSON; {@code bin/sluice-bench all} runs them all and writes
 * {@code jmh-benchmarks/results/REPORT.md} with SVG charts. Exit status: 0 when every scenario ran (rows that need a
 * component missing from this build are reported "not available"), 1 when a scenario failed, 2 for bad usage.
 */
public final class Bench {
    private static final Logger LOG = LoggerFactory.getLogger(Bench.class);
    private static final Map<String, Supplier<Scenario>> SCENARIOS = new LinkedHashMap<>();

    static {
        SCENARIOS.put("event-bus", EventBusScenario::new);
        SCENARIOS.put("stream-processor", StreamProcessorScenario::new);
        SCENARIOS.put("redis-e2e", RedisE2eScenario::new);
        SCENARIOS.put("ingest-stages", IngestStagesScenario::new);
        SCENARIOS.put("jmh", MicroBenchmarksScenario::new);
    }

    private Bench() {
    }

    public static void main(String[] args) {
        if (args.length == 0 || args[0].equals("--help") || args[0].equals("-h")) {
            System.out.print(BenchOptions.USAGE);
            System.exit(args.length == 0 ? 2 : 0);
        }
        String which = args[0];
        BenchOptions options;
        try {
            options = BenchOptions.parse(Arrays.asList(args).subList(1, args.length));
        } catch (IllegalArgumentException e) {
            System.err.println("sluice-bench: " + e.getMessage());
            System.err.print(BenchOptions.USAGE);
            System.exit(2);
            return;
        }
        List<Scenario> selected = new ArrayList<>();
        if (which.equals("all")) {
            SCENARIOS.values().forEach(s -> selected.add(s.get()));
        } else if (SCENARIOS.containsKey(which)) {
            selected.add(SCENARIOS.get(which).get());
        } else {
            System.err.println("sluice-bench: unknown scenario '" + which + "'; one of " + SCENARIOS.keySet() + " or all");
            System.exit(2);
            return;
        }
        // Everything printed from here on also goes to <report dir>/console.log, written beside REPORT.md: the two files
        // always come from the same run.
        java.io.ByteArrayOutputStream console = new java.io.ByteArrayOutputStream();
        System.setOut(new java.io.PrintStream(new TeeOutputStream(System.out, console), true, StandardCharsets.UTF_8));
        List<String> environment = environment(options, which);
        List<ScenarioResult> results = new ArrayList<>();
        int failed = 0;
        for (Scenario s : selected) {
            ScenarioResult r = runOne(s, options);
            if (r == null) {
                failed++;
                continue;
            }
            results.add(r);
        }
        environment.add("load average at the end: " + loadAverage());
        if (!results.isEmpty()) {
            // 'all' writes the committed report; one scenario writes its own under target/ (to compare or splice in)
            Path dir = which.equals("all") ? options.resultsDir() : Path.of("jmh-benchmarks", "target", "results-" + which);
            try {
                Path report = MarkdownReport.write(dir, results, environment, options.quick());
                System.out.println("report: " + report.toAbsolutePath());
                System.out.flush();
                Files.write(dir.resolve("console.log"), console.toByteArray());
            } catch (IOException e) {
                System.err.println("sluice-bench: cannot write the report: " + e);
                failed++;
            }
        }
        System.exit(failed == 0 ? 0 : 1);
    }

    /** Writes to two streams (the terminal and the console.log buffer). */
    private static final class TeeOutputStream extends java.io.OutputStream {
        private final java.io.OutputStream a;
        private final java.io.OutputStream b;

        TeeOutputStream(java.io.OutputStream a, java.io.OutputStream b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public void write(int x) throws IOException {
            a.write(x);
            b.write(x);
        }

        @Override
        public void write(byte[] buf, int off, int len) throws IOException {
            a.write(buf, off, len);
            b.write(buf, off, len);
        }

        @Override
        public void flush() throws IOException {
            a.flush();
            b.flush();
        }
    }

    private static ScenarioResult runOne(Scenario s, BenchOptions options) {
        System.out.println("### " + s.name() + " — " + s.title() + " (reference " + s.reference() + ")"
                + (options.quick() ? " [quick]" : ""));
        long start = System.nanoTime();
        try {
            ScenarioResult raw = s.run(options);
            double elapsed = (System.nanoTime() - start) / 1e9;
            ScenarioResult r = new ScenarioResult(raw.scenario(), raw.title(), raw.reference(), raw.tables(), raw.charts(),
                    raw.notes(), elapsed);
            for (String note : r.notes()) {
                System.out.println("  * " + note);
            }
            for (Table t : r.tables()) {
                System.out.println(TextTable.console(t));
            }
            System.out.println(JsonLine.of(r, options.quick()));
            return r;
        } catch (Exception | Error e) {
            LOG.error("scenario {} FAILED after {} s", s.name(), String.format("%.1f", (System.nanoTime() - start) / 1e9), e);
            return null;
        }
    }

    private static List<String> environment(BenchOptions o, String which) {
        List<String> env = new ArrayList<>();
        env.add("date: " + Instant.now());
        env.add("command: `bin/sluice-bench " + which + (o.quick() ? " --quick" : "") + "` (warm-ups " + o.warmups()
                + ", iterations " + o.iterations() + ", wait strategy " + o.waitStrategy() + ")");
        env.add("commit: " + gitCommit());
        env.add("machine: " + Runtime.getRuntime().availableProcessors() + " cores, "
                + (osTotalMemory() / (1 << 30)) + " GiB RAM, " + System.getProperty("os.name") + " " + System.getProperty("os.version")
                + " " + System.getProperty("os.arch") + "; load average at the start: " + loadAverage());
        env.add("JVM: " + System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version")
                + ", max heap " + (Runtime.getRuntime().maxMemory() >> 20) + " MiB");
        env.addAll(o.notes());
        return env;
    }

    private static long osTotalMemory() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getTotalMemorySize();
        }
        return 0;
    }

    static String loadAverage() {
        try {
            String s = Files.readString(Path.of("/proc/loadavg"), StandardCharsets.US_ASCII).trim();
            String[] f = s.split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    private static String gitCommit() {
        try {
            Process p = new ProcessBuilder("git", "rev-parse", "--short", "HEAD").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            Process d = new ProcessBuilder("git", "status", "--porcelain", "--untracked-files=no").redirectErrorStream(true).start();
            String dirty = new String(d.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            return p.waitFor() == 0 ? out + (dirty.isEmpty() ? "" : " (with uncommitted changes)") : "unknown";
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }
}
