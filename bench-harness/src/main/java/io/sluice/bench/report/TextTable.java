package io.sluice.bench.report;

import java.util.ArrayList;
import java.util.List;

/** Renders a {@link Table} as aligned plain text (console) or as a Markdown table (report). */
public final class TextTable {
    private static final String[] HEADER = {"metric", "unit", "Sluice median [min–max]", "baseline median [min–max]",
            "reference", "Sluice vs reference", "Sluice vs baseline", "goal", "note"};

    private TextTable() {
    }

    public static String console(Table table) {
        List<String[]> lines = cells(table);
        int[] width = new int[HEADER.length];
        for (String[] l : lines) {
            for (int i = 0; i < l.length; i++) {
                width[i] = Math.max(width[i], l[i].length());
            }
        }
        StringBuilder b = new StringBuilder();
        b.append("== ").append(table.title()).append('\n');
        b.append("   baseline: ").append(table.baselineName()).append('\n');
        for (int r = 0; r < lines.size(); r++) {
            String[] l = lines.get(r);
            b.append("  ");
            for (int i = 0; i < l.length; i++) {
                b.append(pad(l[i], width[i])).append(i == l.length - 1 ? "" : " | ");
            }
            b.append('\n');
            if (r == 0) {
                b.append("  ");
                for (int i = 0; i < width.length; i++) {
                    b.append("-".repeat(width[i])).append(i == width.length - 1 ? "" : "-+-");
                }
                b.append('\n');
            }
        }
        return b.toString();
    }

    public static String markdown(Table table) {
        List<String[]> lines = cells(table);
        StringBuilder b = new StringBuilder();
        b.append("**").append(table.title()).append("** — baseline: ").append(table.baselineName()).append("\n\n");
        for (int r = 0; r < lines.size(); r++) {
            b.append('|');
            for (String c : lines.get(r)) {
                b.append(' ').append(c.replace("|", "\\|")).append(" |");
            }
            b.append('\n');
            if (r == 0) {
                b.append("|---|---|--:|--:|--:|---|---|---|---|\n");
            }
        }
        return b.append('\n').toString();
    }

    private static List<String[]> cells(Table table) {
        List<String[]> lines = new ArrayList<>();
        lines.add(HEADER);
        for (Row row : table.rows()) {
            lines.add(new String[]{
                    row.metric(),
                    row.unit(),
                    row.sluice() == null ? "not available" : row.sluice().describe(),
                    row.baseline() == null ? "—" : row.baseline().describe(),
                    row.reference() == null ? "—" : Numbers.format(row.reference()),
                    row.verdict(),
                    row.baselineVerdictText(),
                    row.goalText(),
                    row.note() == null ? "" : row.note()});
        }
        return lines;
    }

    private static String pad(String s, int w) {
        return s.length() >= w ? s : s + " ".repeat(w - s.length());
    }
}
