package io.sluice.bench;

import io.sluice.core.WaitStrategyType;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The harness options, parsed and validated once. Every option is {@code --name value} except the flag
 * {@code --quick}.
 *
 * @param quick        run every scenario for a few seconds (CI smoke test; the figures mean nothing)
 * @param warmups      un-recorded runs before measuring, per configuration
 * @param iterations   measured runs per configuration (medians and spreads are over these)
 * @param resultsDir   where {@code all} writes REPORT.md and the SVGs
 * @param workDir      parent of the temporary data directories (journals, server data)
 * @param waitStrategy the broker's and the baseline rings' wait strategy
 * @param notes        free text added to the report's environment section
 * @param extra        scenario-specific options ({@code --messages 1000,5000})
 */
public record BenchOptions(boolean quick, int warmups, int iterations, Path resultsDir, Path workDir,
                           WaitStrategyType waitStrategy, List<String> notes, Map<String, String> extra) {

    public static final String USAGE = """
            usage: bin/sluice-bench SCENARIO|all [--quick] [options]
              scenarios: event-bus, stream-processor, redis-e2e, ingest-stages, jmh; 'all' runs every one and writes
                         jmh-benchmarks/results/REPORT.md with SVG charts
              --quick                 a few seconds per scenario (CI smoke test; figures mean nothing)
              --iterations N          measured iterations per configuration (default 5, quick 2)
              --warmups N             warm-up runs per configuration (default 1)
              --results-dir DIR       where 'all' writes the report (default jmh-benchmarks/results;
                                      with --quick: jmh-benchmarks/target/results-quick)
              --work-dir DIR          parent of temporary data directories (default java.io.tmpdir)
              --wait-strategy S       sleeping|yielding|blocking|busy_spin for Sluice and the baseline rings (default sleeping)
              --note TEXT             a line for the report's environment section (repeatable)
              --messages LIST         redis-e2e message counts (default 1000,5000,10000,20000,100000; quick 1000)
              --rows N                ingest-stages rows per stage (default 200000; quick 20000)
            microbenchmarks (JMH): java -jar jmh-benchmarks/target/benchmarks.jar BusPublishBenchmark -rf json
            """;

    public BenchOptions {
        if (warmups < 0) {
            throw new IllegalArgumentException("--warmups must be >= 0, got " + warmups);
        }
        if (iterations < 1) {
            throw new IllegalArgumentException("--iterations must be >= 1, got " + iterations);
        }
        notes = List.copyOf(notes);
        extra = Map.copyOf(extra);
    }

    /** Parses everything after the scenario name. */
    public static BenchOptions parse(List<String> args) {
        boolean quick = false;
        Integer warmups = null;
        Integer iterations = null;
        Path results = null;
        Path work = Path.of(System.getProperty("java.io.tmpdir"));
        WaitStrategyType wait = WaitStrategyType.SLEEPING;
        List<String> notes = new java.util.ArrayList<>();
        Map<String, String> extra = new HashMap<>();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--quick")) {
                quick = true;
                continue;
            }
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + a + "'");
            }
            if (i + 1 >= args.size()) {
                throw new IllegalArgumentException(a + " needs a value");
            }
            String v = args.get(++i);
            switch (a) {
                case "--iterations" -> iterations = positiveInt(a, v);
                case "--warmups" -> warmups = Integer.parseInt(v);
                case "--results-dir" -> results = Path.of(v);
                case "--work-dir" -> work = Path.of(v);
                case "--wait-strategy" -> wait = WaitStrategyType.valueOf(v.toUpperCase(Locale.ROOT));
                case "--note" -> notes.add(v);
                case "--messages", "--rows" -> extra.put(a.substring(2), v);
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        if (results == null) {
            // quick figures mean nothing: keep them away from the committed report
            results = quick ? Path.of("jmh-benchmarks", "target", "results-quick") : Path.of("jmh-benchmarks", "results");
        }
        return new BenchOptions(quick, warmups == null ? 1 : warmups, iterations == null ? (quick ? 2 : 5) : iterations,
                results, work, wait, notes, extra);
    }

    private static int positiveInt(String name, String v) {
        int n = Integer.parseInt(v);
        if (n < 1) {
            throw new IllegalArgumentException(name + " must be >= 1, got " + v);
        }
        return n;
    }

    /** Picks the quick or the full value of a workload size. */
    public int size(int full, int quickSize) {
        return quick ? quickSize : full;
    }
}
