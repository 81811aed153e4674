package io.sluice.bench.report;

import io.sluice.bench.report.chart.Chart;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Writes {@code REPORT.md} and one SVG per chart into the results directory. The report opens with the machine and
 * the command, then lists every row where Sluice loses to the reference, then each scenario's tables and pictures.
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

        b.append("## Where Sluice loses to a reference row\n\n");
        int losses = 0;
        int wins = 0;
        int unavailable = 0;
        StringBuilder lines = new StringBuilder();
        for (ScenarioResult r : results) {
            for (Table t : r.tables()) {
                StringBuilder lost = new StringBuilder();
                for (Row row : t.rows()) {
                    if (row.losesToReference()) {
                        losses++;
                        lost.append(lost.length() == 0 ? "" : "; ").append(row.metric()).append(" ")
                                .append(Numbers.format(row.sluice().median())).append(" vs ")
                                .append(Numbers.format(row.reference())).append(' ').append(row.unit());
                    } else if (row.sluice() != null && row.reference() != null) {
                        wins++;
                    } else if (row.sluice() == null && row.reference() != null) {
                        unavailable++;
                    }
                }
                if (lost.length() > 0) {
                    lines.append("| `").append(r.scenario()).append("` | ").append(t.title().replace("|", "\\|")).append(" | ")
                            .append(lost.toString().replace("|", "\\|")).append(" |\n");
                }
            }
        }
        b.append("Sluice's median loses to the reference in **").append(losses).append("** rows and beats or ties it in **")
                .append(wins).append("** (rows with both figures; ±1% counts as a tie)")
                .append(unavailable > 0 ? "; " + unavailable + " reference rows have no Sluice figure in this run (marked *not available*, with the reason)" : "")
                .append(".\n\n");
        if (losses > 0) {
            b.append("| scenario | table | rows Sluice loses (Sluice median vs reference) |\n|---|---|---|\n").append(lines).append('\n');
        }

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
}
