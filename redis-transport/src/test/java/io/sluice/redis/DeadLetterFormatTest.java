package io.sluice.redis;

import io.sluice.redis.internal.PackedEntries;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The one dead-letter format (no server): how an entry given up becomes letters, whatever its layout, and the fields
 * a letter is stored as.
 */
class DeadLetterFormatTest {

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Map<String, String> stored(DeadLetterStream.Letter l) {
        Object[] kv = DeadLetterStream.fieldsOf(l);
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            out.put(new String((byte[]) kv[i], StandardCharsets.UTF_8), new String((byte[]) kv[i + 1], StandardCharsets.UTF_8));
        }
        return out;
    }

    @Test
    void aPackedEntryGivenUpAfterTooManyDeliveriesIsOneLetterPerEventWithItsIndexGroupAndCount() {
        Map<byte[], byte[]> fields = Map.of(PackedEntries.PACKED, PackedEntries.pack(List.of(b("a"), b("b")), 0, 2));
        StreamEntry entry = new StreamEntry("5-0", List.of(b("a"), b("b")), 4, null, fields);

        List<DeadLetterStream.Letter> letters = DeadLetterStream.lettersOf("s", entry, "delivered 3 times", "ingest", 3);

        assertThat(letters).hasSize(2);
        assertThat(stored(letters.get(1))).containsExactly(Map.entry("payload", "b"), Map.entry("error", "delivered 3 times"),
                Map.entry("source", "s/5-0#1"), Map.entry("group", "ingest"), Map.entry("deliveries", "3"));
    }

    @Test
    void aProducersEntryIsOneLetterWithItsValueAsPayloadAndItsOtherFieldsCopied() {
        Map<byte[], byte[]> fields = new LinkedHashMap<>();
        fields.put(b("v"), b("poison"));
        fields.put(b("k"), b("bad"));
        fields.put(b("h.trace"), b("t1"));
        StreamEntry entry = new StreamEntry("7-1", List.of(), 4, null, fields);

        List<DeadLetterStream.Letter> letters = DeadLetterStream.lettersOf("sluice:{payments}:0", entry, "why", "billing", 3);

        assertThat(letters).singleElement().satisfies(l -> assertThat(stored(l))
                .containsEntry("payload", "poison").containsEntry("source", "sluice:{payments}:0/7-1")
                .containsEntry("k", "bad").containsEntry("h.trace", "t1").containsEntry("deliveries", "3")
                .doesNotContainKey("v"));
    }

    @Test
    void aMalformedEntryIsOneLetterWithItsRawFieldAndTheParseErrorWithoutGroupWhenNotCounted() {
        byte[] corrupt = {1, 'x', (byte) 0xC8, 0x01};
        MalformedEntryException bad;
        try {
            PackedEntries.events("9-0", Map.of(PackedEntries.PACKED, corrupt));
            throw new AssertionError("parsed");
        } catch (MalformedEntryException e) {
            bad = e;
        }
        StreamEntry entry = new StreamEntry("9-0", List.of(), 0, bad, Map.of(PackedEntries.PACKED, corrupt));

        List<DeadLetterStream.Letter> letters = DeadLetterStream.lettersOf("s", entry, null, null, 0);

        assertThat(letters).singleElement().satisfies(l -> {
            assertThat(l.payload()).isEqualTo(corrupt);
            assertThat(l.error()).contains("9-0").contains("offset 2");
            assertThat(stored(l)).containsOnlyKeys("payload", "error", "source").containsEntry("source", "s/9-0");
        });
    }
}
