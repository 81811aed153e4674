package io.sluice.bench.report.chart;

/** A picture for the report, rendered as a self-contained SVG document (readable in any browser or viewer). */
public interface Chart {
    /** File name inside the results directory, e.g. {@code event-bus-sustained.svg}. */
    String fileName();

    String title();

    String toSvg();
}
