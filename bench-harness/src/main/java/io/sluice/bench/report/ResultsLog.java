package io.sluice.bench.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Reads back the tables of a run from its {@code console.log}: every scenario ends with one line of JSON
 * ({@link JsonLine}) holding each row's median, spread, run count, reference, comparability and goals. Rebuilt
 * samples keep the median, min, max and count (the only figures the report prints), so a report rendered from them
 * shows the same cells as the run's own. Logs written before rows carried a reason read "no reason recorded".
 *
 * <p>{@code java -cp bench-harness/target/sluice-bench.jar io.sluice.bench.report.ResultsLog CONSOLE_LOG OUT_DIR} re-renders the report of
 * that run with this code's verdict logic (tables only: notes and charts are not in the JSON).
 */
public final class ResultsLog {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    static final String NO_REASON = "marked not comparable in that run (no reason recorded)";

    private ResultsLog() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: ResultsLog CONSOLE_LOG OUT_DIR");
            System.exit(2);
        }
        Path report = MarkdownReport.write(Path.of(args[1]), read(Path.of(args[0])),
                List.of("re-rendered from " + args[0] + " (tables only; notes and charts are in the run's own report)"),
                false);
        System.out.println("report: " + report.toAbsolutePath());
    }

    /** The scenarios of one run, in the order they ran. */
    public static List<ScenarioResult> read(Path consoleLog) {
        List<ScenarioResult> results = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(consoleLog, StandardCharsets.UTF_8)) {
                if (line.startsWith("{\"scenario\"")) {
                    results.add(scenario(MAPPER.readTree(line)));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + consoleLog, e);
        }
        return results;
    }

    private static ScenarioResult scenario(JsonNode s) {
        List<Table> tables = new ArrayList<>();
        for (JsonNode t : s.get("tables")) {
            Table.Builder b = Table.builder(t.get("title").asText(), t.get("baseline").asText());
            for (JsonNode r : t.get("rows")) {
                b.row(row(r));
            }
            tables.add(b.build());
        }
        return new ScenarioResult(s.get("scenario").asText(), s.get("scenario").asText(), "", tables, List.of(),
                List.of(), s.path("elapsedSeconds").asDouble(Double.NaN));
    }

    private static Row row(JsonNode r) {
        Row row = new Row(r.get("metric").asText(), r.get("unit").asText(),
                Better.valueOf(r.get("better").asText().toUpperCase(Locale.ROOT)), sample(r.get("sluice")),
                sample(r.get("baseline")), r.get("reference").isNull() ? null : r.get("reference").asDouble(),
                r.get("note").isNull() ? null : r.get("note").asText());
        JsonNode reason = r.path("notComparable");
        if (!reason.isMissingNode() && !reason.isNull()) {
            row = row.notComparable(reason.asText());
        } else if (!r.path("comparable").asBoolean(true)) {
            row = row.notComparable(NO_REASON);
        }
        for (JsonNode g : r.path("goals")) {
            row = row.withGoal(new Goal(Goal.Basis.valueOf(g.get("basis").asText().toUpperCase(Locale.ROOT)),
                    g.get("factor").asDouble()));
        }
        return row;
    }

    /** A sample with the logged median, min, max and count (values in between set to the median). */
    static Sample sample(JsonNode s) {
        if (s == null || s.isNull() || s.get("median").isNull()) {
            return null;
        }
        double median = s.get("median").asDouble();
        double min = s.get("min").asDouble();
        double max = s.get("max").asDouble();
        int n = s.get("runs").asInt();
        if (n <= 1) {
            return Sample.of(median);
        }
        if (n == 2) {
            return Sample.of(min, max);
        }
        double[] v = new double[n];
        java.util.Arrays.fill(v, median);
        v[0] = min;
        v[n - 1] = max;
        return Sample.of(v);
    }
}
