package io.sluice.redis.internal;

import io.sluice.redis.MalformedEntryException;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

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

        List<byte[]> read = PackedEntries.events("1-0", body);

        assertThat(read).hasSize(events.size());
        for (int i = 0; i < events.size(); i++) {
            assertThat(read.get(i)).as("event " + i).isEqualTo(events.get(i));
        }
    }

    @Test
    void aRangeOfTheEventsIsPackedAlone() {
        List<byte[]> events = List.of(new byte[]{1}, new byte[]{2}, new byte[]{3});
        Map<byte[], byte[]> body = Map.of(PackedEntries.PACKED, PackedEntries.pack(events, 1, 3));
        assertThat(PackedEntries.events("1-0", body)).containsExactly(new byte[]{2}, new byte[]{3});
    }

    @Test
    void anEntryOfAnotherWriterIsOneEventAndAForeignEntryNone() {
        assertThat(PackedEntries.events("1-0", Map.of(PackedEntries.SINGLE, new byte[]{9}))).containsExactly(new byte[]{9});
        assertThat(PackedEntries.events("1-0", Map.of("v".getBytes(StandardCharsets.US_ASCII), new byte[]{9}))).isEmpty();
        assertThat(PackedEntries.events("1-0", null)).isEmpty();
    }

    private static MalformedEntryException malformed(byte[] field) {
        return catchThrowableOfType(MalformedEntryException.class,
                () -> PackedEntries.events("1700000000000-7", Map.of(PackedEntries.PACKED, field)));
    }

    @Test
    void aLengthVarintCutOffByTheEndOfTheFieldIsMalformedAtItsOffset() {
        // event "a", then a varint whose continuation bit promises a byte that is not there
        MalformedEntryException e = malformed(new byte[]{1, 'a', (byte) 0x80});

        assertThat(e).isNotNull();
        assertThat(e.entryId()).isEqualTo("1700000000000-7");
        assertThat(e.offset()).isEqualTo(2);
        assertThat(e.field()).containsExactly(1, 'a', (byte) 0x80);
        assertThat(e).hasMessageContaining("1700000000000-7").hasMessageContaining("offset 2").hasMessageContaining("truncated");
    }

    @Test
    void aLengthVarintOfMoreThanFiveBytesIsMalformed() {
        byte[] field = new byte[12];
        java.util.Arrays.fill(field, 0, 6, (byte) 0x81); // six continuation bytes: no int's length is that long
        MalformedEntryException e = malformed(field);

        assertThat(e).isNotNull();
        assertThat(e.offset()).isZero();
        assertThat(e).hasMessageContaining("longer than 5 bytes");
    }

    @Test
    void aLengthPastTheEndOfTheFieldIsMalformedWhetherSmallOrBeyondAnInt() {
        // a length of 3 with 2 bytes left
        MalformedEntryException shortField = malformed(new byte[]{0, 3, 'x', 'y'});
        assertThat(shortField).isNotNull();
        assertThat(shortField.offset()).isEqualTo(1);
        assertThat(shortField).hasMessageContaining("event length 3").hasMessageContaining("2 bytes left");

        // a 5-byte varint of 2^35 - 1, which overflows an int (read as a negative length before)
        MalformedEntryException huge = malformed(new byte[]{(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x7F, 'z'});
        assertThat(huge).isNotNull();
        assertThat(huge.offset()).isZero();
        assertThat(huge).hasMessageContaining("event length " + ((1L << 35) - 1));

        // a length of 2^31 (5 bytes) that would wrap to Integer.MIN_VALUE in an int accumulator
        MalformedEntryException wraps = malformed(new byte[]{(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x08});
        assertThat(wraps).isNotNull();
        assertThat(wraps).hasMessageContaining("event length " + (1L << 31));
    }

    @Test
    void anEmptyPackedFieldIsAnEntryWithoutEvents() {
        assertThat(PackedEntries.events("1-0", Map.of(PackedEntries.PACKED, new byte[0]))).isEmpty();
    }
}
