package io.sluice.bench.report;

/** Which direction of a figure is an improvement: latencies want lower, throughputs higher. */
public enum Better {
    LOWER, HIGHER;

    /** True when {@code a} is at least as good as {@code b}. */
    public boolean atLeastAsGood(double a, double b) {
        return this == LOWER ? a <= b : a >= b;
    }
}
