package io.sluice.bench.report;

import io.sluice.bench.report.chart.Chart;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Writes {@code REPORT.md} and one SVG per chart into the results directory. The report opens with the machine and
 * the command, then a summary counted from the tables ({@link Summary}) and the lists generated from them (losses to
 * the reference, losses to the same-run baseline or peer, goals missed, worse not-comparable rows), then each
 * scenario's tables and pictures.
 */
public final class MarkdownReport {
    private MarkdownReport() {
    }

    /** @param environment lines describing the machine, JVM, commit and command */
    public static Path write(Path dir, List<ScenarioResult> results, List<String> environment, boolean quick)
            throws IOException {
        Files.createDirectories(dir);
        StringBuilder b = new StringBuilder(64 * 1024);
        b.append("# Sluice benchmark report\n\n");
        if (quick) {
            b.append("> **Quick mode** (`--quick`): every scenario ran for a few seconds to check that it works. "
                    + "These figures mean nothing; run `bin/sluice-bench all` for real ones.\n\n");
        }
        b.append("Produced by `bin/sluice-bench all").append(quick ? " --quick" : "").append("` — every table puts side by "
                + "side **Sluice**, a **raw baseline measured in the same run** on the same machine, and the **reference "
                + "report's figure** (measured by its authors on their hardware). Each Sluice and baseline cell is the "
                + "median of several measured iterations after warm-up, with the spread [min–max] of those iterations. "
                + "Rate-controlled latencies are corrected for coordinated omission (measured from each event's intended "
                + "send time).\n\n");
        b.append("## Environment\n\n");
        for (String e : environment) {
            b.append("- ").append(e).append('\n');
        }
        b.append('\n');

        List<Table> all = new ArrayList<>();
        results.forEach(r -> all.addAll(r.tables()));
        b.append("## Summary\n\n").append(Summary.of(all).markdown());
        b.append("The four lists below are generated from the same tables: every row counted as a loss, every goal "
                + "missed, and the not-comparable rows where Sluice's figure is worse.\n\n");
        section(b, results, "Where Sluice loses to the reference",
                "rows Sluice loses (Sluice median vs reference)", Row::losesToReference,
                row -> Numbers.format(row.sluice().median()) + " vs " + Numbers.format(row.reference()) + " " + row.unit());
        section(b, results, "Where Sluice loses to the same-run baseline or peer",
                "rows Sluice loses (Sluice median vs baseline median)", row -> row.baselineVerdict() == Verdict.LOSES,
                row -> Numbers.format(row.sluice().median()) + " vs " + Numbers.format(row.baseline().median()) + " "
                        + row.unit());
        section(b, results, "Goals missed", "rows whose goal Sluice's median misses (Sluice median, goal)",
                row -> row.goals().stream().anyMatch(g -> g.status(row) == Goal.Status.MISSED),
                row -> Numbers.format(row.sluice().median()) + " " + row.unit() + ", goal " + String.join(" and ", row.goals().stream()
                        .filter(g -> g.status(row) == Goal.Status.MISSED).map(g -> g.describe(row)).toList()));
        section(b, results, "Not comparable, and Sluice's figure is worse (counted in no total)",
                "rows (Sluice median vs reference: why not comparable)", Row::worseThanIncomparableReference,
                row -> Numbers.format(row.sluice().median()) + " vs " + Numbers.format(row.reference()) + " " + row.unit() + ": "
                        + row.notComparable());

        for (ScenarioResult r : results) {
            b.append("## `").append(r.scenario()).append("` — ").append(r.title()).append("\n\n");
            b.append("Reference: `").append(r.reference()).append("`. Run time ")
                    .append(Numbers.format(r.elapsedSeconds())).append(" s.\n\n");
            for (String note : r.notes()) {
                b.append("- ").append(note).append('\n');
            }
            if (!r.notes().isEmpty()) {
                b.append('\n');
            }
            for (Table t : r.tables()) {
                b.append(TextTable.markdown(t));
            }
            for (Chart c : r.charts()) {
                Files.writeString(dir.resolve(c.fileName()), c.toSvg(), StandardCharsets.UTF_8);
                b.append("![").append(c.title()).append("](").append(c.fileName()).append(")\n\n");
            }
        }
        Path report = dir.resolve("REPORT.md");
        Files.writeString(report, b.toString(), StandardCharsets.UTF_8);
        return report;
    }

    /** One generated list: for each table, the rows that match, as "metric figures". */
    private static void section(StringBuilder b, List<ScenarioResult> results, String heading, String column,
                                Predicate<Row> matches, Function<Row, String> figures) {
        b.append("## ").append(heading).append("\n\n");
        StringBuilder lines = new StringBuilder();
        int count = 0;
        for (ScenarioResult r : results) {
            for (Table t : r.tables()) {
                StringBuilder hit = new StringBuilder();
                for (Row row : t.rows()) {
                    if (matches.test(row)) {
                        count++;
                        hit.append(hit.length() == 0 ? "" : "; ").append(row.metric()).append(' ')
                                .append(figures.apply(row));
                    }
                }
                if (hit.length() > 0) {
                    lines.append("| `").append(r.scenario()).append("` | ").append(t.title().replace("|", "\\|"))
                            .append(" | ").append(hit.toString().replace("|", "\\|")).append(" |\n");
                }
            }
        }
        if (count == 0) {
            b.append("None.\n\n");
            return;
        }
        b.append(count).append(count == 1 ? " row.\n\n" : " rows.\n\n");
        b.append("| scenario | table | ").append(column).append(" |\n|---|---|---|\n").append(lines).append('\n');
    }
}
