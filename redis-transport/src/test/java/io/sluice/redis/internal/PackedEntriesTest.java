package io.sluice.redis.internal;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class PackedEntriesTest {

    @Test
    void packedEventsOfEverySizeComeBackInOrder() {
        List<byte[]> events = new ArrayList<>();
        events.add(new byte[0]);
        events.add("a".getBytes(StandardCharsets.US_ASCII));
        events.add(new byte[127]);  // one length byte
        events.add(new byte[128]);  // two
        events.add(new byte[20_000]); // three
        events.get(4)[19_999] = 7;
        Map<byte[], byte[]> body = new LinkedHashMap<>();
        body.put(PackedEntries.PACKED, PackedEntries.pack(events, 0, events.size()));

        List<byte[]> read = PackedEntries.events(body);

        assertThat(read).hasSize(events.size());
        for (int i = 0; i < events.size(); i++) {
            assertThat(read.get(i)).as("event " + i).isEqualTo(events.get(i));
        }
    }

    @Test
    void aRangeOfTheEventsIsPackedAlone() {
        List<byte[]> events = List.of(new byte[]{1}, new byte[]{2}, new byte[]{3});
        Map<byte[], byte[]> body = Map.of(PackedEntries.PACKED, PackedEntries.pack(events, 1, 3));
        assertThat(PackedEntries.events(body)).containsExactly(new byte[]{2}, new byte[]{3});
    }

    @Test
    void anEntryOfAnotherWriterIsOneEventAndAForeignEntryNone() {
        assertThat(PackedEntries.events(Map.of(PackedEntries.SINGLE, new byte[]{9}))).containsExactly(new byte[]{9});
        assertThat(PackedEntries.events(Map.of("v".getBytes(StandardCharsets.US_ASCII), new byte[]{9}))).isEmpty();
        assertThat(PackedEntries.events(null)).isEmpty();
    }
}
