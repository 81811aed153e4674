package io.sluice.redis.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * How events sit in the entries of {@link io.sluice.redis.StreamWriter}'s streams. The writer packs several events
 * into one entry (field {@code b}), so that XADD, XREADGROUP, the pending-entries list and XACK work per entry, not
 * per event: each of them costs Redis microseconds per entry, which capped ingest's stream strategies at a few ten
 * thousand events/s when every event was its own entry (measured). An entry written by someone else with one event
 * in field {@code e} is read as well.
 *
 * <pre>
 *  field "b":  | uvarint len0 | event0 bytes | uvarint len1 | event1 bytes | ...     (LEB128 lengths)
 *  field "e":  | event bytes |                                                     (single event)
 * </pre>
 */
public final class PackedEntries {
    public static final byte[] PACKED = "b".getBytes(StandardCharsets.US_ASCII);
    public static final byte[] SINGLE = "e".getBytes(StandardCharsets.US_ASCII);

    private PackedEntries() {
    }

    /** Packs events {@code [from, to)} into one field value. */
    public static byte[] pack(List<byte[]> events, int from, int to) {
        int size = 0;
        for (int i = from; i < to; i++) {
            size += events.get(i).length + 5;
        }
        byte[] out = new byte[size];
        int pos = 0;
        for (int i = from; i < to; i++) {
            byte[] e = events.get(i);
            int len = e.length;
            while ((len & ~0x7F) != 0) {
                out[pos++] = (byte) ((len & 0x7F) | 0x80);
                len >>>= 7;
            }
            out[pos++] = (byte) len;
            System.arraycopy(e, 0, out, pos, e.length);
            pos += e.length;
        }
        return Arrays.copyOf(out, pos);
    }

    /** The events of an entry's fields, in order (empty for an entry with neither field). */
    public static List<byte[]> events(Map<byte[], byte[]> body) {
        if (body == null) {
            return List.of();
        }
        for (Map.Entry<byte[], byte[]> f : body.entrySet()) {
            if (Arrays.equals(f.getKey(), PACKED)) {
                return unpack(f.getValue());
            }
            if (Arrays.equals(f.getKey(), SINGLE)) {
                return List.of(f.getValue());
            }
        }
        return List.of();
    }

    static List<byte[]> unpack(byte[] b) {
        List<byte[]> out = new ArrayList<>();
        int pos = 0;
        while (pos < b.length) {
            int len = 0;
            int shift = 0;
            byte x;
            do {
                x = b[pos++];
                len |= (x & 0x7F) << shift;
                shift += 7;
            } while ((x & 0x80) != 0);
            out.add(Arrays.copyOfRange(b, pos, pos + len));
            pos += len;
        }
        return out;
    }
}
