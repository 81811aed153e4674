package io.sluice.bench;

import io.sluice.bench.internal.CoreToCore;
import io.sluice.bench.report.JsonLine;
import io.sluice.bench.report.MarkdownReport;
import io.sluice.bench.report.ScenarioResult;
import io.sluice.bench.report.Table;
import io.sluice.bench.report.TextTable;
import io.sluice.bench.scenario.EventBusScenario;
import io.sluice.bench.scenario.IngestStagesScenario;
import io.sluice.bench.scenario.MicroBenchmarksScenario;
import io.sluice.bench.scenario.StreamProcessorScenario;
import io.sluice.bench.scenario.kafka.KafkaPeerScenario;
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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

import io.sluice.core.WaitStrategyType;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The scenario harness: {@code bin/sluice-bench SCENARIO [--quick] [options]} runs one scenario and prints its
 * tables and one line of JSON; {@code bin/sluice-bench all} runs them all and writes
 * {@code bench-harness/results/REPORT.md} with SVG charts. Exit status: 0 when every scenario ran (rows that need a
 * component missing from this build are reported "not available"), 1 when a scenario failed, 2 for bad usage.
 * The command line is parsed by picocli ({@code --help} is generated).
 */
@Command(name = "sluice-bench", mixinStandardHelpOptions = true, sortOptions = false, synopsisHeading = "usage: ",
        description = {"Runs a benchmark scenario: its tables, then one JSON line. 'all' runs every scenario and writes "
                + "bench-harness/results/REPORT.md with SVG charts.",
                "Microbenchmarks (JMH): java -jar jmh-benchmarks/target/benchmarks.jar BusPublishBenchmark -rf json"},
        footer = {"", "Exit codes: 0 every scenario ran, 1 a scenario failed, 2 bad usage."})
public final class Bench implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(Bench.class);
    private static final Map<String, Supplier<Scenario>> SCENARIOS = new LinkedHashMap<>();

    static {
        SCENARIOS.put("event-bus", EventBusScenario::new);
        SCENARIOS.put("stream-processor", StreamProcessorScenario::new);
        SCENARIOS.put("kafka-peer", KafkaPeerScenario::new);
        SCENARIOS.put("redis-e2e", RedisE2eScenario::new);
        SCENARIOS.put("ingest-stages", IngestStagesScenario::new);
        SCENARIOS.put("jmh", MicroBenchmarksScenario::new);
    }

    @Parameters(index = "0", paramLabel = "SCENARIO", completionCandidates = ScenarioNames.class,
            description = "one of ${COMPLETION-CANDIDATES}")
    String which;
    @Option(names = "--quick", description = "a few seconds per scenario (CI smoke test; figures mean nothing)")
    boolean quick;
    @Option(names = "--iterations", paramLabel = "N", description = "measured iterations per configuration (default 5, quick 2)")
    Integer iterations;
    @Option(names = "--warmups", paramLabel = "N", defaultValue = "1", description = "warm-up runs per configuration (default: ${DEFAULT-VALUE})")
    int warmups;
    @Option(names = "--results-dir", paramLabel = "DIR", description = "where 'all' writes the report (default bench-harness/results; "
            + "with --quick: bench-harness/target/results-quick)")
    Path resultsDir;
    @Option(names = "--work-dir", paramLabel = "DIR", description = "parent of temporary data directories (default java.io.tmpdir)")
    Path workDir = Path.of(System.getProperty("java.io.tmpdir"));
    @Option(names = "--wait-strategy", paramLabel = "S", defaultValue = "sleeping",
            description = "${COMPLETION-CANDIDATES} for Sluice and the baseline rings (default: ${DEFAULT-VALUE})")
    WaitStrategyType waitStrategy;
    @Option(names = "--note", paramLabel = "TEXT", description = "a line for the report's environment section (repeatable)")
    List<String> notes = new ArrayList<>();
    @Option(names = "--messages", paramLabel = "LIST", description = "redis-e2e message counts (default 1000,5000,10000,20000,100000; quick 1000)")
    String messages;
    @Option(names = "--rows", paramLabel = "N", description = "ingest-stages rows per stage (default 200000; quick 20000)")
    String rows;
    @Option(names = "--records", paramLabel = "N", description = "kafka-peer records per run and side (default 3000000; quick 20000)")
    Long records;

    private Bench() {
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Bench());
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setExitCodeExceptionMapper(e -> e instanceof CommandLine.ParameterException ? 2 : 1);
        cl.setParameterExceptionHandler((e, argv) -> {
            CommandLine c = e.getCommandLine();
            c.getErr().println("sluice-bench: " + e.getMessage());
            CommandLine.UnmatchedArgumentException.printSuggestions(e, c.getErr());
            c.usage(c.getErr());
            return 2;
        });
        return cl;
    }

    /** The scenario names and {@code all}, for help and shell completion. */
    static final class ScenarioNames implements Iterable<String> {
        @Override
        public java.util.Iterator<String> iterator() {
            List<String> names = new ArrayList<>(SCENARIOS.keySet());
            names.add("all");
            return names.iterator();
        }
    }

    @Override
    public Integer call() {
        if (!which.equals("all") && !SCENARIOS.containsKey(which)) {
            throw new CommandLine.ParameterException(new CommandLine(this),
                    "unknown scenario '" + which + "'; one of " + SCENARIOS.keySet() + " or all");
        }
        if (warmups < 0) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--warmups must be >= 0, got " + warmups);
        }
        if (iterations != null && iterations < 1) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--iterations must be >= 1, got " + iterations);
        }
        Map<String, String> extra = new HashMap<>();
        if (messages != null) {
            extra.put("messages", messages);
        }
        if (rows != null) {
            extra.put("rows", rows);
        }
        if (records != null) {
            if (records < 1) {
                throw new CommandLine.ParameterException(new CommandLine(this), "--records must be >= 1, got " + records);
            }
            extra.put("records", Long.toString(records));
        }
        // quick figures mean nothing: keep them away from the committed report
        Path reportDir = resultsDir != null ? resultsDir
                : quick ? Path.of("bench-harness", "target", "results-quick") : Path.of("bench-harness", "results");
        BenchOptions options = new BenchOptions(quick, warmups, iterations == null ? (quick ? 2 : 5) : iterations,
                reportDir, workDir, waitStrategy, notes, extra);
        List<Scenario> selected = new ArrayList<>();
        if (which.equals("all")) {
            SCENARIOS.values().forEach(s -> selected.add(s.get()));
        } else {
            selected.add(SCENARIOS.get(which).get());
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
            Path dir = which.equals("all") ? options.resultsDir() : Path.of("bench-harness", "target", "results-" + which);
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
        return failed == 0 ? 0 : 1;
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
            double coreToCoreBefore = CoreToCore.roundTripNanos();
            ScenarioResult raw = s.run(options);
            double elapsed = (System.nanoTime() - start) / 1e9;
            double coreToCoreAfter = CoreToCore.roundTripNanos();
            List<String> notes = new ArrayList<>(raw.notes());
            notes.add(String.format(Locale.ROOT, "Machine state: a core-to-core round trip (`CoreToCore`: two threads pass a "
                    + "counter through two cache lines; median of 5 runs of 100,000) took %.0f ns at this scenario's start "
                    + "and %.0f ns at its end. On this project's 2-vCPU VM it moves between about 160 and 900 ns as the "
                    + "hypervisor places the vCPUs, and every hand-off between threads on the two cores pays it: rows of "
                    + "different runs are comparable only in the same state (docs/benchmarks.md item 26).",
                    coreToCoreBefore, coreToCoreAfter));
            ScenarioResult r = new ScenarioResult(raw.scenario(), raw.title(), raw.reference(), raw.tables(), raw.charts(),
                    notes, elapsed);
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
        env.add("measured iterations per configuration: " + o.iterations() + " (redis-e2e and ingest-stages: "
                + Math.min(o.iterations(), RedisE2eScenario.MAX_ITERATIONS) + "; jmh: JMH's own " + (o.quick() ? "2 of 300 ms" : "5 of 2 s")
                + " per benchmark); every scenario's notes say what it ran");
        env.add("commit: " + gitCommit());
        env.add("machine: " + Runtime.getRuntime().availableProcessors() + " cores, "
                + (osTotalMemory() / (1 << 30)) + " GiB RAM, " + System.getProperty("os.name") + " " + System.getProperty("os.version")
                + " " + System.getProperty("os.arch") + "; load average at the start: " + loadAverage());
        env.add("JVM: " + System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version")
                + ", max heap " + (Runtime.getRuntime().maxMemory() >> 20) + " MiB; memory and GC flags: "
                + String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                        .filter(a -> a.startsWith("-Xm") || a.startsWith("-XX:")).toList()));
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
