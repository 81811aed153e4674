package io.sluice.bench.report;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * README.md's benchmark figures are generated from the committed run in bench-harness/results (the same run as its
 * REPORT.md); this test fails when they drift. Regenerate with {@code scripts/readme-figures}, or with
 * {@code ./mvnw -o -pl bench-harness -am verify -Dtest=ReadmeFiguresTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Dsluice.docs.regenerate=true}.
 */
class ReadmeFiguresTest {
    static final Path README = Path.of("..", "README.md");
    static final Path RESULTS = Path.of("results");

    @Test
    void theReadmesBenchmarkFiguresAreThoseOfTheCommittedRun() throws IOException {
        String doc = Files.readString(README, StandardCharsets.UTF_8);
        String generated = ReadmeFigures.withBlocks(doc, ReadmeFigures.blocks(RESULTS));
        if (Boolean.getBoolean("sluice.docs.regenerate")) {
            Files.writeString(README, generated, StandardCharsets.UTF_8);
            doc = generated;
        }
        assertThat(doc).as("README.md's benchmark figures differ from bench-harness/results; run scripts/readme-figures "
                + "(see this test's Javadoc)").isEqualTo(generated);
    }

    @Test
    void aPickedRowMissingFromTheRunIsPrintedAsSuchNeverFilledIn() {
        String block = ReadmeFigures.benchmarks(java.util.List.of(), "source");
        assertThat(block).contains("| " + ReadmeFigures.BENCHMARKS.get(0).label() + " | | not in this run |");
    }

    @Test
    void aReadmeWithoutTheMarkersIsRefusedByName() {
        assertThatThrownBy(() -> ReadmeFigures.withBlocks("no markers", java.util.Map.of("benchmarks", "x")))
                .hasMessageContaining("readme-figures:benchmarks");
    }
}
