package io.sluice.bench.internal;

import java.nio.charset.StandardCharsets;

/**
 * The 004 reference's ~40-byte trading message, {@code {"id":N,"sym":"AAPL","px":150.25,"qty":100}}, and a
 * cheap parser for its id (the consumer uses it to find the event's intended send time).
 */
public final class TradeMessages {
    private static final byte[] PREFIX = "{\"id\":".getBytes(StandardCharsets.US_ASCII);

    private TradeMessages() {
    }

    public static byte[] message(int id) {
        return ("{\"id\":" + id + ",\"sym\":\"AAPL\",\"px\":150.25,\"qty\":100}").getBytes(StandardCharsets.US_ASCII);
    }

    public static byte[][] messages(int count) {
        byte[][] all = new byte[count][];
        for (int i = 0; i < count; i++) {
            all[i] = message(i);
        }
        return all;
    }

    /** Parses N from the start of a message (no allocation). */
    public static int id(byte[] buf, int length) {
        int v = 0;
        for (int i = PREFIX.length; i < length; i++) {
            int d = buf[i] - '0';
            if (d < 0 || d > 9) {
                return v;
            }
            v = v * 10 + d;
        }
        return v;
    }
}
