package io.sluice.redis.internal;

import io.sluice.redis.MalformedEntryException;

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
    /** An int's LEB128 takes at most 5 bytes. */
    static final int MAX_VARINT_BYTES = 5;

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

    /**
     * The events of an entry's fields, in order (empty for an entry with neither field).
     *
     * @param entryId names the entry in a {@link MalformedEntryException}
     * @throws MalformedEntryException when field {@code b} does not parse
     */
    public static List<byte[]> events(String entryId, Map<byte[], byte[]> body) {
        if (body == null) {
            return List.of();
        }
        for (Map.Entry<byte[], byte[]> f : body.entrySet()) {
            if (Arrays.equals(f.getKey(), PACKED)) {
                return unpack(entryId, f.getValue());
            }
            if (Arrays.equals(f.getKey(), SINGLE)) {
                return List.of(f.getValue());
            }
        }
        return List.of();
    }

    /**
     * Field {@code b}'s events. Every read is bounds-checked against the field: a length varint must end inside the
     * field within {@link #MAX_VARINT_BYTES} bytes and fit an int, and its event must end inside the field.
     */
    static List<byte[]> unpack(String entryId, byte[] b) {
        List<byte[]> out = new ArrayList<>();
        int pos = 0;
        while (pos < b.length) {
            int start = pos;
            long len = 0;
            int shift = 0;
            byte x;
            do {
                if (pos == b.length) {
                    throw malformed(entryId, start, "length varint truncated by the end of the field", b);
                }
                if (pos - start == MAX_VARINT_BYTES) {
                    throw malformed(entryId, start, "length varint longer than " + MAX_VARINT_BYTES + " bytes", b);
                }
                x = b[pos++];
                len |= (long) (x & 0x7F) << shift;
                shift += 7;
            } while ((x & 0x80) != 0);
            if (len > b.length - pos) {
                throw malformed(entryId, start, "event length " + len + " runs past the end of the field ("
                        + (b.length - pos) + " bytes left)", b);
            }
            out.add(Arrays.copyOfRange(b, pos, pos + (int) len));
            pos += (int) len;
        }
        return out;
    }

    private static MalformedEntryException malformed(String entryId, int offset, String problem, byte[] field) {
        return new MalformedEntryException(entryId, "b", offset, problem, field);
    }
}
