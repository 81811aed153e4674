package io.sluice.bench.scenario;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Builds RowBinary bodies for the bench table
 * {@code (id UInt64, run UInt32, ts UInt32, user_id UInt32, event_type String, payload String)}:
 * <pre>
 *  id: 8 bytes LE │ run: 4 bytes LE │ ts: 4 bytes LE (epoch s, UInt32) │ user_id: 4 bytes LE │
 *  event_type: varint length + UTF-8 │ payload: varint length + UTF-8
 * </pre>
 */
final class RowBinaryBatch {
    static final String COLUMNS = "id UInt64, run UInt32, ts UInt32, user_id UInt32, event_type String, payload String";
    private static final String[] TYPES = {"click", "view", "purchase", "signup"};

    private RowBinaryBatch() {
    }

    static byte[] build(int run, long firstId, int rows, long epochSeconds) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(rows * 96);
        for (int i = 0; i < rows; i++) {
            long id = firstId + i;
            le(out, id, 8);
            le(out, run, 4);
            le(out, epochSeconds, 4);
            le(out, id % 100_000, 4);
            string(out, TYPES[(int) (id % TYPES.length)]);
            string(out, "{\"page\":\"/products/" + (id % 997) + "\",\"ref\":\"campaign-" + (id % 13) + "\",\"v\":1}");
        }
        return out.toByteArray();
    }

    /** The same row as JSON (one JSONEachRow line), for the strategies that take JSON events. */
    static byte[] json(int run, long id, long epochSeconds) {
        return ("{\"id\":" + id + ",\"run\":" + run + ",\"ts\":" + epochSeconds + ",\"user_id\":" + (id % 100_000)
                + ",\"event_type\":\"" + TYPES[(int) (id % TYPES.length)] + "\",\"payload\":\"{\\\"page\\\":\\\"/products/"
                + (id % 997) + "\\\",\\\"ref\\\":\\\"campaign-" + (id % 13) + "\\\",\\\"v\\\":1}\"}")
                .getBytes(StandardCharsets.UTF_8);
    }

    private static void le(ByteArrayOutputStream out, long v, int bytes) {
        for (int i = 0; i < bytes; i++) {
            out.write((int) (v >>> (8 * i)) & 0xff);
        }
    }

    private static void string(ByteArrayOutputStream out, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        int n = b.length;
        while ((n & ~0x7f) != 0) {
            out.write((n & 0x7f) | 0x80);
            n >>>= 7;
        }
        out.write(n);
        out.write(b, 0, b.length);
    }
}
