package io.sluice.bench;

import io.sluice.bench.report.ScenarioResult;

/**
 * One reproducible workload from a reference report. A scenario measures Sluice and a raw baseline in the same run,
 * sets them beside the reference's figures, and reports what it could not measure (with the reason) instead of
 * failing: a missing optional component gives "not available" rows, a bug throws.
 */
public interface Scenario {
    /** The command-line name, e.g. {@code event-bus}. */
    String name();

    String title();

    /** The reference report file this scenario reproduces. */
    String reference();

    ScenarioResult run(BenchOptions options) throws Exception;
}
