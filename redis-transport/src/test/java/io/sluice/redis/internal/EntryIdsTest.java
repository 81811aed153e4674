package io.sluice.redis.internal;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EntryIdsTest {

    @Test
    void anEntryIdRoundTripsThroughItsOffset() {
        for (String id : new String[]{"0-0", "0-1", "1718000000000-0", "1718000000000-4194303", "2199023255551-7"}) {
            assertThat(EntryIds.toId(EntryIds.toOffset(id))).isEqualTo(id);
        }
    }

    @Test
    void offsetsGrowWithIds() {
        assertThat(EntryIds.toOffset("1718000000000-5")).isLessThan(EntryIds.toOffset("1718000000000-6"));
        assertThat(EntryIds.toOffset("1718000000000-4194303")).isLessThan(EntryIds.toOffset("1718000000001-0"));
        assertThat(EntryIds.millis(EntryIds.toOffset("1718000000123-9"))).isEqualTo(1718000000123L);
        assertThat(EntryIds.firstOffsetAt(1718000000123L)).isEqualTo(EntryIds.toOffset("1718000000123-0"));
    }

    @Test
    void idsThatDoNotFitAnOffsetAreRejectedNotFolded() {
        assertThatThrownBy(() -> EntryIds.toOffset("1718000000000-4194304")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EntryIds.toOffset("2199023255552-0")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EntryIds.toOffset("garbage")).isInstanceOf(IllegalArgumentException.class);
    }
}
