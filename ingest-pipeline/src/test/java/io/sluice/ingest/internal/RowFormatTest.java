package io.sluice.ingest.internal;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * JSON passthrough rows of the offset-range strategy: the offset columns replace the closing brace, written straight
 * into the batch (no String per row), and a key that only resembles a reserved one is not refused.
 */
class RowFormatTest {
    private final RowFormat format = new RowFormat("db.t", null, RowFormat.Provenance.OFFSETS);

    @Test
    void offsetColumnsReplaceTheClosingBraceOfEveryRow() {
        RowBatch<Long> batch = new RowBatch<>(1, 8); // grows while rows are appended
        format.append(batch, format.encode(bytes("{\"id\":1}")), 0, 0L, 0L);
        format.append(batch, format.encode(bytes("  { \"name\" : \"x}\" }  ")), 7, 1234567890123L, 1L);
        format.append(batch, format.encode(bytes("{}")), 2_147_483_647, Long.MAX_VALUE, 2L);

        assertThat(new String(batch.array(), 0, batch.bytes(), StandardCharsets.UTF_8)).isEqualTo(
                "{\"id\":1,\"_sluice_partition\":0,\"_sluice_offset\":0}\n"
                        + "  { \"name\" : \"x}\" ,\"_sluice_partition\":7,\"_sluice_offset\":1234567890123}\n"
                        + "{\"_sluice_partition\":2147483647,\"_sluice_offset\":9223372036854775807}\n");
        assertThat(batch.rows()).isEqualTo(3);
        assertThat(batch.tags()).containsExactly(0L, 1L, 2L);
        assertThat(new String(format.rowBytes(batch, 0), StandardCharsets.UTF_8))
                .isEqualTo("{\"id\":1,\"_sluice_partition\":0,\"_sluice_offset\":0}");
    }

    @Test
    void decimalsAreWrittenDigitByDigit() {
        byte[] out = new byte[20];
        for (long v : new long[] {0, 9, 10, 99, 100, 4_294_967_295L, 999_999_999_999_999_999L, Long.MAX_VALUE}) {
            int end = RowFormat.writeDecimal(out, 0, v);
            assertThat(new String(out, 0, end, StandardCharsets.US_ASCII)).isEqualTo(Long.toString(v));
        }
    }

    @Test
    void onlyAReservedKeyItselfIsRefusedNotAKeyThatResemblesIt() {
        byte[] resembling = bytes("{\"_sluice_offsets\":1,\"_sluice_offse\":2,\"_SLUICE_OFFSET\":3}");
        assertThat(format.encode(resembling)).as("passed through as given, not refused").isEqualTo(resembling);
        RowBatch<Long> batch = new RowBatch<>(1, 64);
        format.append(batch, format.encode(resembling), 1, 5L, 5L);
        assertThat(new String(format.rowBytes(batch, 0), StandardCharsets.UTF_8)).isEqualTo(
                "{\"_sluice_offsets\":1,\"_sluice_offse\":2,\"_SLUICE_OFFSET\":3,\"_sluice_partition\":1,\"_sluice_offset\":5}");
        assertThatThrownBy(() -> format.encode(bytes("{\"a\":1,\"_sluice_partition\":2}")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("_sluice_partition");
        assertThatThrownBy(() -> format.encode(bytes("{\"_sluice_\\u006fffset\":2}")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("_sluice_offset");
        assertThat(JsonKeys.firstTopLevelKeyIn(bytes("{\"_sluice_offset\":1}"), List.of("_sluice_partition"))).isNull();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
