package io.sluice.bench;

import io.sluice.core.WaitStrategyType;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The harness options, validated once; {@link Bench} parses them from the command line (picocli).
 *
 * @param quick        run every scenario for a few seconds (CI smoke test; the figures mean nothing)
 * @param warmups      un-recorded runs before measuring, per configuration
 * @param iterations   measured runs per configuration (medians and spreads are over these)
 * @param resultsDir   where {@code all} writes REPORT.md and the SVGs
 * @param workDir      parent of the temporary data directories (journals, server data)
 * @param waitStrategy the broker's and the baseline rings' wait strategy
 * @param notes        free text added to the report's environment section
 * @param extra        scenario-specific options ({@code --messages 1000,5000})
 */
public record BenchOptions(boolean quick, int warmups, int iterations, Path resultsDir, Path workDir,
                           WaitStrategyType waitStrategy, List<String> notes, Map<String, String> extra) {

    public BenchOptions {
        if (warmups < 0) {
            throw new IllegalArgumentException("--warmups must be >= 0, got " + warmups);
        }
        if (iterations < 1) {
            throw new IllegalArgumentException("--iterations must be >= 1, got " + iterations);
        }
        notes = List.copyOf(notes);
        extra = Map.copyOf(extra);
    }

    /** Picks the quick or the full value of a workload size. */
    public int size(int full, int quickSize) {
        return quick ? quickSize : full;
    }
}
