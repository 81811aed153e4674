package io.sluice.bench.scenario;

import io.sluice.bench.BenchOptions;
import io.sluice.bench.report.Sample;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/** Warm-up runs (discarded) followed by measured runs; samples over the measured runs. */
final class Repeat {
    private Repeat() {
    }

    @FunctionalInterface
    interface Measurement {
        Run run() throws Exception;
    }

    static List<Run> runs(BenchOptions o, Measurement m) throws Exception {
        for (int i = 0; i < o.warmups(); i++) {
            m.run();
        }
        List<Run> measured = new ArrayList<>(o.iterations());
        for (int i = 0; i < o.iterations(); i++) {
            measured.add(m.run());
        }
        return measured;
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
