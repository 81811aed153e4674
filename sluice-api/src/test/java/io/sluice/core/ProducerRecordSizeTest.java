package io.sluice.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link ProducerRecord#serializedSize()} counts header keys as their UTF-8 encoding does, without encoding them. */
class ProducerRecordSizeTest {

    @Property(tries = 2000)
    void headerKeysCountAsTheirUtf8Bytes(@ForAll("anyText") String key) {
        ProducerRecord r = new ProducerRecord("t", 0, null, new byte[3], List.of(new Header(key, new byte[5])),
                ProducerRecord.NO_TIMESTAMP);
        int expected = 8 + 8 + 4 + 2 + 4 + 3 + (2 + key.getBytes(StandardCharsets.UTF_8).length + 4 + 5);
        assertThat(r.serializedSize()).isEqualTo(expected);
    }

    /** ASCII, two- and three-byte characters, surrogate pairs, and lone surrogates (encoded as '?'). */
    @Provide
    Arbitrary<String> anyText() {
        Arbitrary<Character> chars = Arbitraries.oneOf(
                Arbitraries.chars().range('\u0000', '\u007f'),
                Arbitraries.chars().range('\u0080', '\u07ff'),
                Arbitraries.chars().range('\u0800', '\uffff'),
                Arbitraries.chars().range('\ud800', '\udfff'));
        return chars.list().ofMaxSize(12).map(cs -> {
            StringBuilder b = new StringBuilder();
            cs.forEach(b::append);
            return b.toString();
        });
    }
}
