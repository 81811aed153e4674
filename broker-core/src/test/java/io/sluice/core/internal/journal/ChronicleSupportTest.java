package io.sluice.core.internal.journal;

import io.sluice.core.RollCycleType;
import net.openhft.chronicle.queue.RollCycle;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/** The journal's denser Chronicle index: at most {@code 2 × INDEX_SPACING} apart, and as many documents per cycle. */
class ChronicleSupportTest {

    @ParameterizedTest
    @EnumSource(RollCycleType.class)
    void everyRollCycleIndexesEveryFewDocumentsAndKeepsItsCapacity(RollCycleType type) {
        RollCycle cycle = ChronicleSupport.rollCycle(type);
        int spacing = ChronicleSupport.indexSpacing(cycle);
        int count = ChronicleSupport.indexCount(cycle);

        assertThat(spacing).isPositive().isLessThanOrEqualTo(2 * ChronicleSupport.INDEX_SPACING);
        assertThat(Integer.bitCount(spacing)).isEqualTo(1);
        assertThat(Integer.bitCount(count)).isEqualTo(1);
        // Chronicle addresses count² × spacing documents per cycle file: the roll cycle's capacity, not less
        long capacity = (long) count * count * spacing;
        long defaults = (long) cycle.defaultIndexCount() * cycle.defaultIndexCount() * cycle.defaultIndexSpacing();
        assertThat(capacity).isEqualTo(defaults);
    }
}
