package io.sluice.net.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class ProduceRequestTest {

    @Test
    void offsetsAreWrittenInDecimalExactlyAsLongToStringWritesThem() {
        long[] values = {0, 1, 9, 10, 11, 99, 100, 101, 999_999_999, 1_000_000_000, -1, -9, -10, -11,
                Long.MAX_VALUE, Long.MAX_VALUE - 1, Long.MIN_VALUE, Long.MIN_VALUE + 1, Integer.MAX_VALUE, 1L << 40};
        for (long value : values) {
            ByteBuf out = Unpooled.buffer();
            ProduceRequest.writeDecimal(out, value);
            assertThat(out.toString(StandardCharsets.US_ASCII)).isEqualTo(Long.toString(value));
            out.release();
        }
        for (long p = 1; p > 0 && p <= Long.MAX_VALUE / 10; p *= 10) { // every power of ten and its neighbours
            for (long value : new long[] {p - 1, p, p + 1, -p}) {
                ByteBuf out = Unpooled.buffer();
                ProduceRequest.writeDecimal(out, value);
                assertThat(out.toString(StandardCharsets.US_ASCII)).isEqualTo(Long.toString(value));
                out.release();
            }
        }
    }
}
