package io.sluice.core.internal.journal;

import io.sluice.core.EpochClock;
import io.sluice.core.RollCycleType;
import net.openhft.chronicle.core.time.TimeProvider;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.RollCycles;

/** Chronicle Queue settings shared by every journal (the system properties are in {@link ChronicleSwitches}). */
public final class ChronicleSupport {
    private ChronicleSupport() {
    }

    static RollCycle rollCycle(RollCycleType type) {
        return switch (type) {
            case FIVE_MINUTELY -> RollCycles.FIVE_MINUTELY;
            case TEN_MINUTELY -> RollCycles.TEN_MINUTELY;
            case HALF_HOURLY -> RollCycles.HALF_HOURLY;
            case HOURLY -> RollCycles.FAST_HOURLY;
            case DAILY -> RollCycles.FAST_DAILY;
        };
    }

    /**
     * Chronicle indexes every {@code indexSpacing}-th document of a cycle file and reaches the others by walking their
     * headers from the nearest indexed one ({@code moveToIndex}). The roll cycles' defaults index every 256th
     * document, so a read by offset into a partition of large documents walked up to 255 headers, each on another page
     * of the file: 82% of a random read's samples in stream-processor 7 (docs/benchmarks.md, issue 22). Sluice indexes every {@value #INDEX_SPACING}th document and
     * widens the index by the same factor, so a cycle file indexes as many documents as the roll cycle's sequence
     * numbers can name ({@code indexCount² × indexSpacing} unchanged): a read walks at most 3 headers, for 2 bytes of
     * index per document instead of 1/32. Only new cycle files take it: a file keeps the spacing it was created with.
     * Every document (spacing 1, index arrays of 512 KiB) was measured against this and is slower, for Sluice's read by
     * offset and for the raw read alike: a read then touches more index pages than the walk it saves (docs/benchmarks.md,
     * issue 22 item 12).
     */
    static final int INDEX_SPACING = 4;

    /** The index count that keeps {@code rollCycle}'s capacity at {@link #indexSpacing}. */
    static int indexCount(RollCycle rollCycle) {
        int spacing = indexSpacing(rollCycle);
        // capacity = count² × spacing: count × sqrt(default spacing / spacing), both powers of two
        int shift = Integer.numberOfTrailingZeros(rollCycle.defaultIndexSpacing()) - Integer.numberOfTrailingZeros(spacing);
        return rollCycle.defaultIndexCount() << (shift / 2);
    }

    /**
     * {@link #INDEX_SPACING}, or a power of two up to twice it where the roll cycle's default spacing is an odd power of
     * two away (so the capacity stays exact), never above the default.
     */
    static int indexSpacing(RollCycle rollCycle) {
        int defaults = rollCycle.defaultIndexSpacing();
        if (defaults <= INDEX_SPACING) {
            return defaults;
        }
        int shift = Integer.numberOfTrailingZeros(defaults) - Integer.numberOfTrailingZeros(INDEX_SPACING);
        return shift % 2 == 0 ? INDEX_SPACING : INDEX_SPACING * 2;
    }

    static TimeProvider timeProvider(EpochClock clock) {
        if (clock == EpochClock.SYSTEM) {
            return net.openhft.chronicle.core.time.SystemTimeProvider.INSTANCE;
        }
        return clock::epochMillis;
    }
}
