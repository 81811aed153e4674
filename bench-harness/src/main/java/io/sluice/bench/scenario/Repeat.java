package io.sluice.bench.scenario;

import io.sluice.bench.BenchOptions;
import io.sluice.bench.internal.CpuTime;
import io.sluice.bench.report.Sample;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * Warm-up runs (discarded) followed by measured runs; samples over the measured runs. Where Sluice and its baseline
 * can run independently, {@link #alternating} measures them in turns. Every measured run carries the CPU time (user +
 * system) of the whole benchmark JVM read before and after it ({@link Run#cpuSeconds()}).
 */
final class Repeat {
    private Repeat() {
    }

    @FunctionalInterface
    interface Measurement {
        Run run() throws Exception;
    }

    static List<Run> runs(BenchOptions o, Measurement m) throws Exception {
        return inTurns(o, o.warmups(), m).get(0);
    }

    /** One measured run with the process CPU time it took (everything {@code m.run()} does, set-up included). */
    static Run measured(Measurement m) throws Exception {
        CpuTime.Mark before = CpuTime.mark();
        Run r = m.run();
        return r.withCpu(before.seconds());
    }

    /** The runs of two systems measured in turns (a, b, a, b, ...), warm-ups included, so drift hits both alike. */
    record Pair(List<Run> a, List<Run> b) {
    }

    /**
     * The measured runs of each system, the systems taking turns run by run ({@code systems[0]}, {@code systems[1]},
     * ..., {@code systems[0]}, ...) after {@code warmups} turns whose runs are discarded. A null system (not available)
     * is skipped and gets null runs.
     */
    static List<List<Run>> inTurns(BenchOptions o, int warmups, Measurement... systems) throws Exception {
        for (int i = 0; i < warmups; i++) {
            for (Measurement m : systems) {
                if (m != null) {
                    m.run();
                }
            }
        }
        List<List<Run>> runs = new ArrayList<>(systems.length);
        for (Measurement m : systems) {
            runs.add(m == null ? null : new ArrayList<>(o.iterations()));
        }
        for (int i = 0; i < o.iterations(); i++) {
            for (int s = 0; s < systems.length; s++) {
                if (systems[s] != null) {
                    runs.get(s).add(measured(systems[s]));
                }
            }
        }
        return runs;
    }

    /** {@link #runs} of {@code a} and {@code b} alternating; {@code a} may be null (system not available). */
    static Pair alternating(BenchOptions o, Measurement a, Measurement b) throws Exception {
        return alternating(o, o.warmups(), a, b);
    }

    /** As {@link #alternating(BenchOptions, Measurement, Measurement)} with {@code warmups} turns of warm-up. */
    static Pair alternating(BenchOptions o, int warmups, Measurement a, Measurement b) throws Exception {
        List<List<Run>> runs = inTurns(o, warmups, a, b);
        return new Pair(runs.get(0), runs.get(1));
    }

    /** Null when the runs are null (system not available). */
    static Sample sample(List<Run> runs, ToDoubleFunction<Run> f) {
        if (runs == null) {
            return null;
        }
        List<Double> values = new ArrayList<>(runs.size());
        for (Run r : runs) {
            values.add(f.applyAsDouble(r));
        }
        return Sample.of(values);
    }

    static Double median(List<Run> runs, ToDoubleFunction<Run> f) {
        Sample s = sample(runs, f);
        return s == null ? null : s.median();
    }
}
