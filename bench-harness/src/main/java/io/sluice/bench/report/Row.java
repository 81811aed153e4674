package io.sluice.bench.report;

import java.util.ArrayList;
import java.util.List;

/**
 * One line of a scenario table: the same figure for Sluice, for the raw baseline (or peer) measured in the same run,
 * and as printed in the reference report, with the goals stated for it.
 *
 * @param metric        what is measured, e.g. "P99"
 * @param unit          e.g. "µs", "msg/s"
 * @param better        which direction wins
 * @param sluice        Sluice's iterations, or null when not measured (then {@code note} says why)
 * @param baseline      the raw baseline's (or peer's) iterations, or null when there is none for this row
 * @param reference     the reference report's figure, or null when it has none
 * @param note          free text: what the row measures exactly, or why a column is empty
 * @param notComparable null when Sluice's figure and the reference's measure the same quantity the same way;
 *                      otherwise why they do not (a journaled append against a memory-only hand-off, an enqueue
 *                      against an acknowledged send, different heap settings): the reference is shown for context,
 *                      the verdict is "not comparable" with this reason, and the row counts in no total
 * @param goals         the goals stated for this row (checked against Sluice's median), possibly empty
 */
public record Row(String metric, String unit, Better better, Sample sluice, Sample baseline, Double reference,
                  String note, String notComparable, List<Goal> goals) {

    /** Within this relative distance of the other figure a median counts as a tie (e.g. a paced rate). */
    static final double TIE = 0.01;

    public Row {
        if (notComparable != null && notComparable.isBlank()) {
            throw new IllegalArgumentException("a not-comparable row says why; got a blank reason for " + metric);
        }
        goals = List.copyOf(goals);
    }

    /** A row whose Sluice figure measures the same quantity as the reference's, with no goal. */
    public Row(String metric, String unit, Better better, Sample sluice, Sample baseline, Double reference, String note) {
        this(metric, unit, better, sluice, baseline, reference, note, null, List.of());
    }

    /** This row with its reference marked as a different quantity, for {@code reason} (see {@link #notComparable}). */
    public Row notComparable(String reason) {
        return new Row(metric, unit, better, sluice, baseline, reference, note, reason, goals);
    }

    /** This row with one more goal. */
    public Row withGoal(Goal goal) {
        List<Goal> g = new ArrayList<>(goals);
        g.add(goal);
        return new Row(metric, unit, better, sluice, baseline, reference, note, notComparable, g);
    }

    /** True when Sluice's figure and the reference's measure the same quantity. */
    public boolean comparable() {
        return notComparable == null;
    }

    /** Sluice's median against the reference. */
    public Verdict referenceVerdict() {
        if (sluice == null || reference == null) {
            return Verdict.NO_FIGURE;
        }
        if (notComparable != null) {
            return Verdict.NOT_COMPARABLE;
        }
        return compare(sluice.median(), reference);
    }

    /** Sluice's median against the same-run baseline's (or peer's) median: both measured here, the same way. */
    public Verdict baselineVerdict() {
        if (sluice == null || baseline == null) {
            return Verdict.NO_FIGURE;
        }
        return compare(sluice.median(), baseline.median());
    }

    /** The report's cell for {@link #referenceVerdict()}: "beats (1.37×)", "LOSES (0.91×)", "not comparable: why". */
    public String verdict() {
        return switch (referenceVerdict()) {
            case NO_FIGURE -> "";
            case NOT_COMPARABLE -> "not comparable: " + notComparable;
            default -> describe(referenceVerdict(), sluice.median(), reference);
        };
    }

    /** The report's cell for {@link #baselineVerdict()}. */
    public String baselineVerdictText() {
        Verdict v = baselineVerdict();
        return v == Verdict.NO_FIGURE ? "" : describe(v, sluice.median(), baseline.median());
    }

    /** The report's goal cell: each goal with "met" or "MISSED", or "" when the row has none. */
    public String goalText() {
        StringBuilder b = new StringBuilder();
        for (Goal g : goals) {
            b.append(b.length() == 0 ? "" : "; ").append(g.describe(this)).append(": ").append(switch (g.status(this)) {
                case MET -> "met";
                case MISSED -> "MISSED";
                case NOT_APPLICABLE -> "not applicable, the baseline misses it (" + Numbers.format(baseline.median()) + ")";
                case NO_FIGURE -> "no figure";
            });
        }
        return b.toString();
    }

    /** True when Sluice's median is worse than the reference (a comparable row only). */
    public boolean losesToReference() {
        return referenceVerdict() == Verdict.LOSES;
    }

    /** True for a not-comparable row whose Sluice figure is numerically worse than the reference's. */
    public boolean worseThanIncomparableReference() {
        return referenceVerdict() == Verdict.NOT_COMPARABLE && compare(sluice.median(), reference) == Verdict.LOSES;
    }

    private Verdict compare(double s, double other) {
        if (tie(s, other)) {
            return Verdict.TIES;
        }
        return better.atLeastAsGood(s, other) ? Verdict.BEATS : Verdict.LOSES;
    }

    private static boolean tie(double s, double r) {
        return s == r || (r != 0 && Math.abs(s - r) <= TIE * Math.abs(r));
    }

    private String describe(Verdict v, double s, double other) {
        return switch (v) {
            case TIES -> "ties (±1%)";
            case BEATS -> "beats (" + ratio(s, other) + ")";
            case LOSES -> "LOSES (" + ratio(s, other) + ")";
            default -> throw new IllegalArgumentException(v.name());
        };
    }

    private String ratio(double s, double r) {
        if (s == 0 || r == 0) {
            return "vs 0";
        }
        double x = better == Better.LOWER ? r / s : s / r;
        return Numbers.format(x) + "×";
    }
}
