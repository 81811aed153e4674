package io.sluice.bench.report;

/**
 * A goal stated for one row: Sluice's median must be at least as good as {@code factor} × a basis, in the row's
 * {@link Better} direction (a latency goal is an upper bound, a throughput goal a lower bound). The basis is 1 (an
 * absolute figure in the row's unit), the same-run baseline's median, or the reference's figure.
 *
 * <p>A goal may apply only where the same-run baseline reaches it ({@link #absoluteWhereBaselineReaches}): issue 22
 * asks for a sustained P99 of 50 µs "wherever the raw ring reaches them here". Where the baseline's own median misses
 * such a goal, its status is {@link Status#NOT_APPLICABLE} and it counts as neither met nor missed.
 *
 * @param basis             what {@code factor} multiplies
 * @param factor            e.g. 0.3 (ms) for an absolute P99 goal, 1.5 for "P50 ≤ 1.5× the raw echo"
 * @param whereBaselineReaches true when the goal applies only if the baseline's median meets it too
 */
public record Goal(Basis basis, double factor, boolean whereBaselineReaches) {

    /** What a goal's factor multiplies. */
    public enum Basis { ABSOLUTE, BASELINE, REFERENCE }

    /** Whether Sluice's median met the goal. */
    public enum Status { MET, MISSED, NOT_APPLICABLE, NO_FIGURE }

    public Goal {
        if (!(factor >= 0) || Double.isInfinite(factor)) {
            throw new IllegalArgumentException("goal factor must be a finite number >= 0, got " + factor);
        }
        if (whereBaselineReaches && basis != Basis.ABSOLUTE) {
            throw new IllegalArgumentException("only an absolute goal can depend on the baseline reaching it");
        }
    }

    public Goal(Basis basis, double factor) {
        this(basis, factor, false);
    }

    /** Sluice's median at least as good as {@code value}, in the row's unit. */
    public static Goal absolute(double value) {
        return new Goal(Basis.ABSOLUTE, value);
    }

    /**
     * Sluice's median at least as good as {@code value}, in the row's unit, where the same-run baseline's median is
     * too; {@link Status#NOT_APPLICABLE} where the baseline misses it (the machine cannot reach it).
     */
    public static Goal absoluteWhereBaselineReaches(double value) {
        return new Goal(Basis.ABSOLUTE, value, true);
    }

    /** Sluice's median at least as good as {@code factor} × the same-run baseline's median. */
    public static Goal timesBaseline(double factor) {
        return new Goal(Basis.BASELINE, factor);
    }

    /** Sluice's median at least as good as {@code factor} × the reference's figure. */
    public static Goal timesReference(double factor) {
        return new Goal(Basis.REFERENCE, factor);
    }

    /** The figure Sluice's median must reach in {@code row}, or null when the basis is missing from the row. */
    public Double threshold(Row row) {
        return switch (basis) {
            case ABSOLUTE -> factor;
            case BASELINE -> row.baseline() == null ? null : factor * row.baseline().median();
            case REFERENCE -> row.reference() == null ? null : factor * row.reference();
        };
    }

    public Status status(Row row) {
        Double t = threshold(row);
        if (t == null || row.sluice() == null || (whereBaselineReaches && row.baseline() == null)) {
            return Status.NO_FIGURE;
        }
        if (whereBaselineReaches && !row.better().atLeastAsGood(row.baseline().median(), t)) {
            return Status.NOT_APPLICABLE;
        }
        return row.better().atLeastAsGood(row.sluice().median(), t) ? Status.MET : Status.MISSED;
    }

    /** e.g. "≤ 0.30 ms", "≤ 50.0 µs where the baseline reaches it", "≥ 3.00× reference (416,292)", "≤ 1.50× baseline (69.9 µs)". */
    public String describe(Row row) {
        String sign = row.better() == Better.LOWER ? "≤ " : "≥ ";
        if (basis == Basis.ABSOLUTE) {
            return sign + Numbers.format(factor) + " " + row.unit() + (whereBaselineReaches ? " where the baseline reaches it" : "");
        }
        Double t = threshold(row);
        return sign + Numbers.format(factor) + "× " + basis.name().toLowerCase(java.util.Locale.ROOT)
                + (t == null ? "" : " (" + Numbers.format(t) + ")");
    }
}
