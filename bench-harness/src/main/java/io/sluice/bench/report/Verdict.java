package io.sluice.bench.report;

/**
 * How Sluice's median compares with one other figure of the same row (the reference's, or the same-run baseline's).
 * Only {@link #BEATS}, {@link #TIES} and {@link #LOSES} are counted in the report's totals.
 */
public enum Verdict {
    /** Better than the other figure by more than {@link Row#TIE}. */
    BEATS,
    /** Within {@link Row#TIE} of the other figure (or both zero). */
    TIES,
    /** Worse than the other figure by more than {@link Row#TIE}. */
    LOSES,
    /** Both figures exist but measure different quantities; the row says why. Counted in no total. */
    NOT_COMPARABLE,
    /** One of the two figures is missing. */
    NO_FIGURE;

    /** True for the three verdicts that count in a total. */
    public boolean counted() {
        return this == BEATS || this == TIES || this == LOSES;
    }
}
