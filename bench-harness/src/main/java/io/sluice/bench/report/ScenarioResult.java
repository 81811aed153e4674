package io.sluice.bench.report;

import io.sluice.bench.report.chart.Chart;

import java.util.List;

/**
 * What one scenario produced: its tables, its charts and free-text notes (set-up, what was not available and why).
 */
public record ScenarioResult(String scenario, String title, String reference, List<Table> tables, List<Chart> charts,
                             List<String> notes, double elapsedSeconds) {

    public ScenarioResult {
        tables = List.copyOf(tables);
        charts = List.copyOf(charts);
        notes = List.copyOf(notes);
    }
}
