package io.sluice.bench.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The report's summary is a count of its own verdict cells: a reader recounting the tables finds the same numbers. */
class SummaryTest {

    /** Six rows, one of each kind: beats, ties, loses, not comparable (worse), not comparable (better), no reference. */
    static List<Table> model() {
        Table latency = Table.builder("latency", "raw ring")
                .row(new Row("P50", "µs", Better.LOWER, Sample.of(10, 11, 12), Sample.of(5), 20.0, null)
                        .withGoal(Goal.absolute(15)).withGoal(Goal.absoluteWhereBaselineReaches(10)))
                .row(new Row("P90", "µs", Better.LOWER, Sample.of(100), Sample.of(200), 100.5, null)
                        .withGoal(Goal.absoluteWhereBaselineReaches(150)))
                .row(new Row("P99", "µs", Better.LOWER, Sample.of(300), Sample.of(300), 100.0, null)
                        .withGoal(Goal.absolute(250)))
                .row(new Row("journaled P99", "µs", Better.LOWER, Sample.of(400), Sample.of(100), 100.0, null)
                        .notComparable("the journaled topic appends before delivery"))
                .build();
        Table rate = Table.builder("throughput", "raw journal")
                .row(new Row("rate", "msg/s", Better.HIGHER, Sample.of(2_000), Sample.of(3_000), 1_000.0, null)
                        .notComparable("enqueue, not acknowledged").withGoal(Goal.timesBaseline(1.0)))
                .row(new Row("peer rate", "msg/s", Better.HIGHER, Sample.of(900), Sample.of(1_000), null, null)
                        .withGoal(Goal.timesBaseline(2.0)).withGoal(Goal.absolute(500)))
                .build();
        return List.of(latency, rate);
    }

    @Test
    void theSummaryCountsEachVerdictOnceAndLeavesNotComparableRowsOutOfEveryTotal() {
        Summary s = Summary.of(model());
        assertThat(s.vsReference().get(Verdict.BEATS)).isEqualTo(1);
        assertThat(s.vsReference().get(Verdict.TIES)).isEqualTo(1);
        assertThat(s.vsReference().get(Verdict.LOSES)).isEqualTo(1);
        assertThat(s.vsReference().get(Verdict.NOT_COMPARABLE)).isEqualTo(2);
        assertThat(s.notComparableWorse()).isEqualTo(1);
        assertThat(s.vsBaseline().get(Verdict.BEATS)).isEqualTo(1);
        assertThat(s.vsBaseline().get(Verdict.TIES)).isEqualTo(1);
        assertThat(s.vsBaseline().get(Verdict.LOSES)).isEqualTo(4);
        assertThat(s.goalsMet()).isEqualTo(2);
        assertThat(s.goalsMissed()).isEqualTo(4);
        assertThat(s.goalsNotApplicable()).isEqualTo(1);
    }

    @Test
    void aGoalThatHoldsWhereTheBaselineReachesItIsNotApplicableWhereTheBaselineMissesIt() {
        Goal goal = Goal.absoluteWhereBaselineReaches(50);
        Row baselineMisses = new Row("P99", "µs", Better.LOWER, Sample.of(40), Sample.of(60), null, null).withGoal(goal);
        Row baselineReaches = new Row("P99", "µs", Better.LOWER, Sample.of(60), Sample.of(40), null, null).withGoal(goal);
        Row bothReach = new Row("P99", "µs", Better.LOWER, Sample.of(45), Sample.of(40), null, null).withGoal(goal);
        Row noBaseline = new Row("P99", "µs", Better.LOWER, Sample.of(45), null, null, null).withGoal(goal);

        assertThat(goal.status(baselineMisses)).isEqualTo(Goal.Status.NOT_APPLICABLE);
        assertThat(baselineMisses.goalText()).isEqualTo("≤ 50.0 µs where the baseline reaches it: not applicable, the baseline misses it (60.0)");
        assertThat(goal.status(baselineReaches)).isEqualTo(Goal.Status.MISSED);
        assertThat(goal.status(bothReach)).isEqualTo(Goal.Status.MET);
        assertThat(goal.status(noBaseline)).isEqualTo(Goal.Status.NO_FIGURE);
    }

    @Test
    void aReaderRecountingTheRenderedTablesFindsTheSummarysNumbers(@TempDir Path dir) throws IOException {
        ScenarioResult r = new ScenarioResult("demo", "demo", "ref.txt", model(), List.of(), List.of(), 1.0);
        String md = Files.readString(MarkdownReport.write(dir, List.of(r), List.of("test"), false), StandardCharsets.UTF_8);

        int beats = 0, ties = 0, loses = 0, notComparable = 0, bBeats = 0, bTies = 0, bLoses = 0, met = 0, missed = 0;
        for (String line : md.split("\n")) {
            String[] c = line.split(" \\| ");
            if (c.length < 9 || !line.startsWith("| ") || c[0].equals("| metric")) {
                continue;
            }
            String ref = c[5];
            String base = c[6];
            String goal = c[7];
            beats += ref.startsWith("beats") ? 1 : 0;
            ties += ref.startsWith("ties") ? 1 : 0;
            loses += ref.startsWith("LOSES") ? 1 : 0;
            notComparable += ref.startsWith("not comparable: ") ? 1 : 0;
            bBeats += base.startsWith("beats") ? 1 : 0;
            bTies += base.startsWith("ties") ? 1 : 0;
            bLoses += base.startsWith("LOSES") ? 1 : 0;
            met += count(goal, ": met");
            missed += count(goal, ": MISSED");
        }
        assertThat(md).contains("beats** it in **" + beats + "** rows, **ties** (±1%) in **" + ties
                + "** and **loses** in **" + loses + "**. **" + notComparable + "** rows are *not comparable*");
        assertThat(md).contains("beats in **" + bBeats + "**, ties in **" + bTies + "**, loses in **" + bLoses + "**");
        assertThat(md).contains("**" + met + "** met, **" + missed + "** missed");
        assertThat(beats + ties + loses + notComparable).isEqualTo(5);
        assertThat(md).contains("## Where Sluice loses to the reference\n\n1 row.");
        assertThat(md).contains("; **1** not applicable (goals that hold only where the same-run baseline reaches them");
        assertThat(md).contains("## Goals missed\n\n4 rows.").doesNotContain("## Goals missed\n\nNone.");
        assertThat(md).contains("journaled P99 400 vs 100 µs: the journaled topic appends before delivery");
    }

    private static int count(String s, String what) {
        Matcher m = Pattern.compile(Pattern.quote(what)).matcher(s);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }
}
