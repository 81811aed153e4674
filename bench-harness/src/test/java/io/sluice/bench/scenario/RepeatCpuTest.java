package io.sluice.bench.scenario;

import io.sluice.bench.BenchOptions;
import io.sluice.bench.internal.CpuTime;
import io.sluice.bench.report.Row;
import io.sluice.bench.report.Table;
import io.sluice.core.WaitStrategyType;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every measured run carries the process CPU it took (to the OS's clock-tick resolution, once at each end); the CPU
 * rows are per million of the run's events.
 */
class RepeatCpuTest {

    /** A "run" of {@code events} operations that burns at least {@code millis} of this thread's CPU. */
    private static Run burn(long events, long millis) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long start = threads.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        while (threads.getCurrentThreadCpuTime() - start < TimeUnit.MILLISECONDS.toNanos(millis)) {
            Thread.onSpinWait();
        }
        return Run.of(events, System.nanoTime() - t0);
    }

    @Test
    void measuredRunsCarryAtLeastTheCpuTheyBurnedPerMillionOfTheirEvents() throws Exception {
        BenchOptions o = new BenchOptions(true, 1, 3, Path.of("target"), Path.of("target"), WaitStrategyType.values()[0], List.of(), Map.of());
        List<Run> runs = Repeat.runs(o, () -> burn(500_000, 100));
        assertThat(runs).hasSize(3);
        for (Run r : runs) {
            assertThat(r.cpuSeconds()).isGreaterThanOrEqualTo(0.1 - CpuTime.RESOLUTION_SECONDS * 2);
            assertThat(r.cpuPerMillion()).isCloseTo(r.cpuSeconds() * 2, org.assertj.core.data.Offset.offset(1e-9));
        }
        Repeat.Pair pair = Repeat.alternating(o, () -> burn(1_000_000, 50), () -> burn(2_000_000, 50));
        assertThat(pair.a()).allSatisfy(r -> assertThat(r.cpuPerMillion()).isGreaterThanOrEqualTo(0.05 - CpuTime.RESOLUTION_SECONDS * 2));
        assertThat(pair.b()).allSatisfy(r -> assertThat(r.cpuPerMillion()).isGreaterThanOrEqualTo((0.05 - CpuTime.RESOLUTION_SECONDS * 2) / 2));

        Table.Builder t = Table.builder("t", "b");
        CpuRows.add(t, "x ", runs, pair.b(), "note");
        Row row = t.rows().get(0);
        assertThat(row.metric()).isEqualTo("x CPU (user + sys)");
        assertThat(row.unit()).isEqualTo("s per M events");
        assertThat(row.sluice().count()).isEqualTo(3);
        assertThat(row.sluice().min()).isGreaterThanOrEqualTo((0.1 - CpuTime.RESOLUTION_SECONDS * 2) * 2);
        assertThat(row.reference()).isNull();
    }

    @Test
    void aRunNotMeasuredByRepeatHasNoCpuFigure() {
        assertThat(Run.of(10, 1_000).cpuPerMillion()).isNaN();
    }
}
