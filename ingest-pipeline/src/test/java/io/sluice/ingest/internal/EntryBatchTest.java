package io.sluice.ingest.internal;

import io.sluice.redis.MalformedEntryException;
import io.sluice.redis.StreamEntry;
import io.sluice.redis.internal.PackedEntries;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a batch of the stream strategies is, without Redis or ClickHouse: rows named by (entry, index), rows already
 * landed skipped, malformed entries and refused events dead-lettered and still acknowledged, the batch's query id from
 * its first row, and how many entries to read for a batch.
 */
class EntryBatchTest {
    private final RowFormat format = new RowFormat("db.t", null, RowFormat.Provenance.ENTRIES);

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static StreamEntry packed(String id, String... events) {
        List<byte[]> evs = java.util.Arrays.stream(events).map(EntryBatchTest::b).toList();
        return new StreamEntry(id, evs, 0, null, Map.of(PackedEntries.PACKED, PackedEntries.pack(evs, 0, evs.size())));
    }

    private static StreamEntry malformed(String id) {
        byte[] corrupt = {1, 'x', (byte) 0xC8, 0x01};
        try {
            PackedEntries.events(id, Map.of(PackedEntries.PACKED, corrupt));
            throw new AssertionError("parsed");
        } catch (MalformedEntryException e) {
            return new StreamEntry(id, List.of(), 0, e, Map.of(PackedEntries.PACKED, corrupt));
        }
    }

    @Test
    void rowsAreNamedByEntryAndIndexAndEveryEntryIsAcknowledgedIncludingOnesThatMadeNoRow() {
        EntryBatch batch = EntryBatch.of("s", List.of(packed("1-0", "{\"a\":1}", "{\"a\":2}"), malformed("2-0"),
                packed("3-0", "not json", "{\"a\":3}")), format, Set.of());

        assertThat(batch.rows.tags()).extracting(Object::toString).containsExactly("1-0#0", "1-0#1", "3-0#1");
        assertThat(new String(format.rowBytes(batch.rows, 1), StandardCharsets.UTF_8))
                .isEqualTo("{\"a\":2,\"_sluice_entry\":\"1-0\",\"_sluice_index\":1}");
        assertThat(batch.ids).containsExactly("1-0", "2-0", "3-0");
        assertThat(batch.events).as("a malformed entry holds none").isEqualTo(4);
        assertThat(batch.letters).extracting(DeadLetters.Letter::source).containsExactly("s/2-0", "s/3-0#0");
        assertThat(batch.letters.get(0).error()).contains("2-0").contains("offset 2");
        assertThat(batch.letters.get(1).payload()).isEqualTo(b("not json"));
        assertThat(EntryBatch.queryId("db.t", "s", batch.rows)).isEqualTo("sluice-db.t-s-1-0-0");
    }

    @Test
    void rowsOfRedeliveredEntriesAlreadyInTheTableAreSkippedAndTheQueryIdFollowsTheFirstRowLeft() {
        EntryBatch batch = EntryBatch.of("s", List.of(packed("1-0", "{\"a\":1}", "{\"a\":2}"), packed("2-0", "{\"a\":3}")),
                format, Set.of("1-0#0", "2-0#0"));

        assertThat(batch.rows.tags()).extracting(Object::toString).containsExactly("1-0#1");
        assertThat(batch.skipped).isEqualTo(2);
        assertThat(batch.ids).containsExactly("1-0", "2-0");
        assertThat(batch.letters).isEmpty();
        assertThat(EntryBatch.queryId("db.t", "s", batch.rows)).isEqualTo("sluice-db.t-s-1-0-1");
    }

    @Test
    void entriesToReadFollowTheEventsPerEntrySeenBetweenOneAndBatchRows() {
        assertThat(EntryBatch.entriesFor(10_000, 256)).isEqualTo(39);
        assertThat(EntryBatch.entriesFor(10_000, 1)).as("one event per entry (another writer)").isEqualTo(10_000);
        assertThat(EntryBatch.entriesFor(100, 256)).as("never none").isEqualTo(1);
        assertThat(EntryBatch.entriesFor(100, 0)).as("no events seen: as if one per entry").isEqualTo(100);
    }
}
