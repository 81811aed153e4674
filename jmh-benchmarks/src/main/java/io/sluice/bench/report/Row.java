package io.sluice.bench.report;

/**
 * One line of a scenario table: the same figure for Sluice, for the raw baseline measured in the same run, and as
 * printed in the reference report.
 *
 * @param metric    what is measured, e.g. "P99"
 * @param unit      e.g. "µs", "msg/s"
 * @param better    which direction wins
 * @param sluice    Sluice's iterations, or null when not measured (then {@code note} says why)
 * @param baseline  the raw baseline's iterations, or null when there is none for this row
 * @param reference the reference report's figure, or null when it has none
 * @param note      free text: what the row measures exactly, or why a column is empty
 * @param comparable false when Sluice's figure and the reference's measure different quantities (for example a
 *                  journaled append against a memory-only hand-off, or an enqueue against an acknowledged send):
 *                  the reference is shown for context and the verdict is "not comparable", never "beats"
 */
public record Row(String metric, String unit, Better better, Sample sluice, Sample baseline, Double reference,
                  String note, boolean comparable) {

    /** A row whose Sluice figure measures the same quantity as the reference's. */
    public Row(String metric, String unit, Better better, Sample sluice, Sample baseline, Double reference, String note) {
        this(metric, unit, better, sluice, baseline, reference, note, true);
    }

    /** This row with its reference marked as a different quantity (see {@link #comparable}). */
    public Row notComparable() {
        return new Row(metric, unit, better, sluice, baseline, reference, note, false);
    }

    /** Within this relative distance of the reference a median counts as a tie (e.g. a paced rate). */
    static final double TIE = 0.01;

    /** Sluice's median against the reference: "beats", "ties", "LOSES", "not comparable" or "" when either is missing. */
    public String verdict() {
        if (sluice == null || reference == null) {
            return "";
        }
        if (!comparable) {
            return "not comparable";
        }
        double s = sluice.median();
        double r = reference;
        if (tie(s, r)) {
            return "ties (±1%)";
        }
        if (better.atLeastAsGood(s, r)) {
            return r == 0 || s == 0 ? "ties or beats" : "beats (" + ratio(s, r) + ")";
        }
        return "LOSES (" + ratio(s, r) + ")";
    }

    /** True when Sluice's median is worse than the reference. */
    public boolean losesToReference() {
        return comparable && sluice != null && reference != null && !tie(sluice.median(), reference)
                && !better.atLeastAsGood(sluice.median(), reference);
    }

    private static boolean tie(double s, double r) {
        return r != 0 && Math.abs(s - r) <= TIE * Math.abs(r);
    }

    private String ratio(double s, double r) {
        if (s == 0 || r == 0) {
            return "vs 0";
        }
        double x = better == Better.LOWER ? r / s : s / r;
        return Numbers.format(x) + "×";
    }
}
