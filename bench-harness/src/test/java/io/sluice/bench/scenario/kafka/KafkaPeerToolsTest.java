package io.sluice.bench.scenario.kafka;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/**
 * What the kafka-peer scenario reads from its child processes: the CPU time of a real child (bash's {@code times}),
 * its exit status and output, the deadline, and the summaries Kafka's perf tools print (lines copied from a run of
 * Kafka 4.1.1's {@code ProducerPerformance} and {@code ConsumerPerformance}).
 */
class KafkaPeerToolsTest {
    /** The last two lines of a 3,000,000-record ProducerPerformance run (a progress line, then the summary). */
    private static final String PRODUCER_OUTPUT = """
            540193 records sent, 107995.4 records/sec (10.30 MB/sec), 3148.6 ms avg latency, 4569.0 ms max latency.
            3000000 records sent, 94906.7 records/sec (9.05 MB/sec), 1942.38 ms avg latency, 4569.00 ms max latency, 2042 ms 50th, 3752 ms 95th, 4291 ms 99th, 4504 ms 99.9th.
            """;
    private static final String CONSUMER_OUTPUT = """
            start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
            2026-11-24 00:51:27:622, 2026-11-24 00:51:33:084, 286.7455, 52.4983, 3006744, 550484.0718, 1053, 4409, 65.0364, 681955.9991
            """;

    @Test
    void aChildsCpuTimeExitStatusAndOutputAreRead(@TempDir Path dir) throws Exception {
        ToolRun r = ToolRun.run("spin", List.of("bash", "-c",
                "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo spun $i; exit 3"), dir, Duration.ofSeconds(120));
        assertThat(r.stdout()).isEqualTo("spun 200000\n");
        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.cpuSeconds()).isGreaterThan(0.0);
        assertThat(r.wallNanos()).isPositive();
    }

    @Test
    void aToolPastItsDeadlineIsKilledAndNamed(@TempDir Path dir) {
        long start = System.nanoTime();
        assertThatThrownBy(() -> ToolRun.run("sleeper", List.of("sleep", "60"), dir, Duration.ofMillis(500)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("sleeper did not finish within PT0.5S");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
    }

    @Test
    void cpuSecondsAreTheChildrenLineOfBashTimes() {
        assertThat(ToolRun.childCpuSeconds("0m0.013s 0m0.009s\n1m14.605s 0m2.830s\n")).isCloseTo(77.435, within(1e-9));
        assertThat(ToolRun.childCpuSeconds("0m0.013s 0m0.009s\n")).isNaN();
        assertThat(ToolRun.childCpuSeconds("")).isNaN();
    }

    @Test
    void producerPerformanceSummaryIsItsLastLineWithPercentiles() {
        KafkaPeerScenario.ProducerSummary s = KafkaPeerScenario.ProducerSummary.parse(PRODUCER_OUTPUT);
        assertThat(s).isNotNull();
        assertThat(s.records()).isEqualTo(3_000_000);
        assertThat(s.perSecond()).isCloseTo(94_906.7, within(1e-9));
        assertThat(s.p50Millis()).isEqualTo(2042);
        assertThat(s.p99Millis()).isEqualTo(4291);
        assertThat(KafkaPeerScenario.ProducerSummary.parse(PRODUCER_OUTPUT.lines().findFirst().orElseThrow())).isNull();
    }

    @Test
    void consumerPerformanceRowIsReadByItsHeader() {
        Map<String, String> row = KafkaPeerScenario.consumerPerformanceRow("SLF4J(W): No SLF4J providers were found.\n" + CONSUMER_OUTPUT);
        assertThat(row).containsEntry("data.consumed.in.nMsg", "3006744").containsEntry("fetch.nMsg.sec", "681955.9991")
                .containsEntry("rebalance.time.ms", "1053");
        assertThat(KafkaPeerScenario.consumerPerformanceRow("WARNING: Exiting before consuming the expected number of messages")).isNull();
    }
}
