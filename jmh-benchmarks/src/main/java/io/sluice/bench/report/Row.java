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
 */
public record Row(String metric, String unit, Better better, Sample sluice, Sample baseline, Double reference,
                  String note) {

    /** Within this relative distance of the reference a median counts as a tie (e.g. a paced rate). */
    static final double TIE = 0.01;

    /** Sluice's median against the reference: "beats", "ties", "LOSES" or "" when either is missing. */
    public String verdict() {
        if (sluice == null || reference == null) {
            return "";
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
        return sluice != null && reference != null && !tie(sluice.median(), reference)
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
