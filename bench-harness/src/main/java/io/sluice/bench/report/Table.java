package io.sluice.bench.report;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A titled group of rows that share one baseline and one reference.
 *
 * @param title        e.g. "Sustained load, 50,000 events at 10,000/s — 1 partition / 1 consumer"
 * @param baselineName what the baseline column is, e.g. "raw Disruptor ring (16,384 slots)"
 * @param rows         the rows, in print order
 */
public record Table(String title, String baselineName, List<Row> rows) {

    public Table {
        rows = List.copyOf(rows);
    }

    public static Builder builder(String title, String baselineName) {
        return new Builder(title, baselineName);
    }

    /** Collects rows while a scenario runs. */
    public static final class Builder {
        private final String title;
        private final String baselineName;
        private final List<Row> rows = new ArrayList<>();

        private Builder(String title, String baselineName) {
            this.title = title;
            this.baselineName = baselineName;
        }

        public Builder row(Row row) {
            rows.add(row);
            return this;
        }

        public Builder row(String metric, String unit, Better better, Sample sluice, Sample baseline, Double reference,
                           String note) {
            return row(new Row(metric, unit, better, sluice, baseline, reference, note));
        }

        /**
         * Like {@link #row(String, String, Better, Sample, Sample, Double, String)}, the reference being a different
         * quantity for {@code reason} (shown in the verdict cell; the row counts in no total).
         */
        public Builder rowNotComparable(String metric, String unit, Better better, Sample sluice, Sample baseline,
                                        Double reference, String note, String reason) {
            return row(new Row(metric, unit, better, sluice, baseline, reference, note).notComparable(reason));
        }

        public List<Row> rows() {
            return Collections.unmodifiableList(rows);
        }

        public Table build() {
            return new Table(title, baselineName, rows);
        }
    }
}
