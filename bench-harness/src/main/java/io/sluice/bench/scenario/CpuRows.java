package io.sluice.bench.scenario;

import io.sluice.bench.report.Better;
import io.sluice.bench.report.Goal;
import io.sluice.bench.report.Row;
import io.sluice.bench.report.Sample;
import io.sluice.bench.report.Table;

import java.util.List;

/**
 * The "CPU (user + sys), s per M events" rows of the scenarios whose runs happen in the benchmark JVM: the process
 * CPU time read before and after each measured run, divided by that run's events, median [min–max] over the runs.
 * No reference report printed a CPU figure, so these rows have no reference cell.
 */
final class CpuRows {
    static final String METRIC = "CPU (user + sys)";
    static final String UNIT = "s per M events";
    /** What every in-JVM CPU row includes; scenarios put it in their notes. */
    static final String WHAT = "CPU (user + sys), s per M events = the benchmark JVM's CPU time over each measured "
            + "run, divided by that run's events; median [min–max] over the measured runs. Read as the sum of every thread's "
            + "on-CPU nanoseconds (`/proc/self/task/*/schedstat`) before and after the run, or, when threads ended during "
            + "the run (their time would be missed), as the process's user + system time "
            + "(`OperatingSystemMXBean.getProcessCpuTime`, 10 ms clock ticks: ±10 ms per run). It is the whole process: "
            + "the system under test, the run's own load generator and consumers in this JVM (not subtracted), waiting "
            + "threads (spinning, yielding or parked on timers), and the JIT compiler and GC; the threads of the other "
            + "column's system sit idle in the same process meanwhile and are counted too. No reference report printed a "
            + "CPU figure.";

    private CpuRows() {
    }

    /** A row "{prefix}CPU (user + sys)" from runs whose CPU {@link Repeat} measured; baseline may be null. */
    static void add(Table.Builder t, String prefix, List<Run> sluice, List<Run> baseline, String note) {
        add(t, prefix, Repeat.sample(sluice, Run::cpuPerMillion), Repeat.sample(baseline, Run::cpuPerMillion), note);
    }

    static void add(Table.Builder t, String prefix, Sample sluice, Sample baseline, String note) {
        add(t, prefix, UNIT, sluice, baseline, note);
    }

    /** As above, with a goal on the row. */
    static void add(Table.Builder t, String prefix, Sample sluice, Sample baseline, String note, Goal goal) {
        t.row(new Row(prefix + METRIC, UNIT, Better.LOWER, sluice, baseline, null, note).withGoal(goal));
    }

    /** As {@link #add(Table.Builder, String, Sample, Sample, String)} in another unit (e.g. "s per M records"). */
    static void add(Table.Builder t, String prefix, String unit, Sample sluice, Sample baseline, String note) {
        t.row(prefix + METRIC, unit, Better.LOWER, sluice, baseline, null, note);
    }
}
