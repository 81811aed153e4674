package io.sluice.bench.scenario.kafka;

import io.sluice.bench.report.Goal;
import io.sluice.bench.report.Row;
import io.sluice.bench.report.Table;
import io.sluice.bench.report.Verdict;
import io.sluice.bench.scenario.kafka.KafkaPeerScenario.Measured;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The same-client table (issue 23): its rows, the goals as data (produce ≥ 2× Kafka, consume ≥ 1.5× Kafka,
 * against the Kafka column's median), and the broker CPU per million records; and the {@code /proc/<pid>/stat} reader
 * the broker CPU comes from.
 */
class SameClientTableTest {
    private static Measured run(double perSecond, double brokerCpu) {
        return new Measured(2_000_000, perSecond, Double.NaN, Double.NaN, brokerCpu, 1.0);
    }

    @Test
    void goalsAreStatedOnTheRowsAndCheckedAgainstKafkasMedian() {
        Table t = SameClientTable.build(2_000_000,
                List.of(run(900_000, 2.0), run(1_100_000, 2.2), run(1_000_000, 2.4)),   // listener produce: median 1.0 M
                List.of(run(400_000, 1.0), run(600_000, 1.2), run(500_000, 1.4)),       // Kafka produce: median 0.5 M
                List.of(run(700_000, 0.4), run(700_000, 0.4), run(700_000, 0.4)),       // listener consume: 0.7 M
                List.of(run(500_000, 0.2), run(500_000, 0.2), run(500_000, 0.2)),       // Kafka consume: 0.5 M
                List.of(run(300_000, 3.0)), List.of(run(200_000, 1.0)));
        assertThat(t.rows()).extracting(Row::metric).containsExactly("produce", "consume",
                "broker CPU per M records, produce (user + sys)", "broker CPU per M records, consume (user + sys)");

        Row produce = t.rows().get(0);
        assertThat(produce.goals()).containsExactly(Goal.timesBaseline(2.0));
        assertThat(produce.goals().get(0).status(produce)).isEqualTo(Goal.Status.MET);   // 1.0 M ≥ 2 × 0.5 M
        assertThat(produce.baselineVerdict()).isEqualTo(Verdict.BEATS);
        assertThat(produce.note()).contains("perf-produce").contains("300,000");

        Row consume = t.rows().get(1);
        assertThat(consume.goals()).containsExactly(Goal.timesBaseline(1.5));
        assertThat(consume.goals().get(0).status(consume)).isEqualTo(Goal.Status.MISSED); // 0.7 M < 1.5 × 0.5 M
        assertThat(consume.goalText()).contains("MISSED");

        Row cpu = t.rows().get(2);
        assertThat(cpu.sluice().median()).isCloseTo(1.1, within(1e-9));   // 2.2 s / 2 M records
        assertThat(cpu.baseline().median()).isCloseTo(0.6, within(1e-9));
        assertThat(cpu.baselineVerdict()).isEqualTo(Verdict.LOSES);
        assertThat(t.rows().get(3).goals()).isEmpty();
    }

    @Test
    void procStatCpuIsFieldsFourteenAndFifteenCountedFromTheLastParenthesis() {
        // a command name with a space and a ')' of its own: the fields after it still count from state (field 3)
        String line = "4242 (java) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 1234 567 0 0 20 0 57 0 100 0 0";
        assertThat(ProcStat.cpuTicks(line)).isEqualTo(1234 + 567);
    }

    @Test
    void procStatOfThisProcessGrowsWithWork() throws Exception {
        long pid = ProcessHandle.current().pid();
        org.junit.jupiter.api.Assumptions.assumeTrue(ProcStat.available(pid), "Linux /proc only");
        double before = ProcStat.cpuSeconds(pid);
        long end = System.nanoTime() + 300_000_000L;
        long x = 0;
        while (System.nanoTime() < end) {
            x += Long.numberOfTrailingZeros(x + System.nanoTime());
        }
        assertThat(x).isNotNegative();
        assertThat(ProcStat.cpuSeconds(pid)).isGreaterThan(before);
    }
}
