package io.sluice.bench.internal;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What the benchmarks' "CPU (user + sys), s per M events" rows are made of. */
class CpuTimeTest {

    @Test
    void theProcessFigureGrowsByAtLeastWhatOneOfItsThreadsBurned() {
        double before = CpuTime.processSeconds();
        double burned = burn(200);
        // the process figure is kept in clock ticks: each of the two reads may be up to one tick short
        assertThat(CpuTime.processSeconds() - before).isGreaterThanOrEqualTo(burned - 2 * CpuTime.RESOLUTION_SECONDS);
    }

    /** Burns at least {@code millis} of the calling thread's CPU; returns what it burned, in seconds. */
    private static double burn(long millis) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long start = threads.getCurrentThreadCpuTime();
        while (threads.getCurrentThreadCpuTime() - start < TimeUnit.MILLISECONDS.toNanos(millis)) {
            Thread.onSpinWait();
        }
        return (threads.getCurrentThreadCpuTime() - start) / 1e9;
    }

    @Test
    void aMarkCountsTheLiveThreadsToTheNanosecond() {
        CpuTime.Mark mark = CpuTime.mark();
        double burned = burn(30);
        double seconds = mark.seconds();
        assertThat(seconds).isGreaterThanOrEqualTo(burned - 2 * CpuTime.RESOLUTION_SECONDS);
        if (!Double.isNaN(mark.threads())) {
            // schedstat is nanoseconds: nothing ended, so the figure is at least what this thread burned
            assertThat(seconds).isGreaterThanOrEqualTo(burned * 0.999);
        }
    }

    @Test
    void aMarkStillCountsAThreadThatEndedDuringTheRun() throws Exception {
        CpuTime.Mark mark = CpuTime.mark();
        double[] burned = new double[1];
        Thread t = new Thread(() -> burned[0] = burn(150), "cpu-time-test-burner");
        t.start();
        t.join(TimeUnit.SECONDS.toMillis(60));
        assertThat(t.isAlive()).isFalse();
        assertThat(mark.seconds()).isGreaterThanOrEqualTo(burned[0] - 2 * CpuTime.RESOLUTION_SECONDS);
    }

    @Test
    void anotherProcessIsReadByPidWhileItRuns() throws Exception {
        Process p = new ProcessBuilder("sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 30").start();
        try {
            double[] seen = {0};
            io.sluice.testkit.Await.until("the shell's busy loop shows up as its CPU time", Duration.ofSeconds(60),
                    () -> (seen[0] = CpuTime.processSeconds(p.pid())) >= 0.05);
            assertThat(CpuTime.processSeconds(p.pid())).isGreaterThanOrEqualTo(seen[0]);
        } finally {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        long gone = p.pid();
        assertThatThrownBy(() -> CpuTime.processSeconds(gone)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(Long.toString(gone));
    }

    @Test
    void perMillionDividesByTheEventsAndRefusesNonsense() {
        assertThat(CpuTime.perMillion(1.5, 3_000_000)).isEqualTo(0.5);
        assertThat(CpuTime.perMillion(0, 10)).isZero();
        assertThatThrownBy(() -> CpuTime.perMillion(1, 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("event count");
        assertThatThrownBy(() -> CpuTime.perMillion(-0.1, 10)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("≥ 0");
        assertThatThrownBy(() -> CpuTime.perMillion(Double.NaN, 10)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> CpuTime.processSeconds(0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("process id");
    }
}
