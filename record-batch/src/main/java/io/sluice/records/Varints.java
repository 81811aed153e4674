package io.sluice.records;

import java.nio.ByteBuffer;

/** Kafka's zig-zag varints (its {@code ByteUtils}) and UTF-8 without allocating, written at absolute indexes. */
final class Varints {
    private Varints() {
    }

    static int sizeOfVarint(int value) {
        int v = (value << 1) ^ (value >> 31);
        int bytes = 1;
        while ((v & 0xffffff80) != 0) {
            bytes++;
            v >>>= 7;
        }
        return bytes;
    }

    static int sizeOfVarlong(long value) {
        long v = (value << 1) ^ (value >> 63);
        int bytes = 1;
        while ((v & 0xffffffffffffff80L) != 0L) {
            bytes++;
            v >>>= 7;
        }
        return bytes;
    }

    /** Writes at {@code p}; returns the index after it. */
    static int writeVarint(ByteBuffer out, int p, int value) {
        int v = (value << 1) ^ (value >> 31);
        while ((v & 0xffffff80) != 0) {
            out.put(p++, (byte) ((v & 0x7f) | 0x80));
            v >>>= 7;
        }
        out.put(p++, (byte) v);
        return p;
    }

    /** Writes at {@code p}; returns the index after it. */
    static int writeVarlong(ByteBuffer out, int p, long value) {
        long v = (value << 1) ^ (value >> 63);
        while ((v & 0xffffffffffffff80L) != 0L) {
            out.put(p++, (byte) ((v & 0x7f) | 0x80));
            v >>>= 7;
        }
        out.put(p++, (byte) v);
        return p;
    }

    /** UTF-8 length of {@code s} without encoding it (an unpaired surrogate counts as '?', as String.getBytes does). */
    static int utf8Length(String s) {
        int n = s.length();
        int bytes = 0;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                bytes++;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                bytes += 4;
                i++;
            } else if (Character.isSurrogate(c)) {
                bytes += 1;
            } else {
                bytes += 3;
            }
        }
        return bytes;
    }

    /** Writes {@code s} as UTF-8 at {@code p} ({@link #utf8Length} bytes); returns the index after it. */
    static int writeUtf8(ByteBuffer out, int p, String s) {
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                out.put(p++, (byte) c);
            } else if (c < 0x800) {
                out.put(p++, (byte) (0xC0 | (c >> 6)));
                out.put(p++, (byte) (0x80 | (c & 0x3F)));
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                int cp = Character.toCodePoint(c, s.charAt(++i));
                out.put(p++, (byte) (0xF0 | (cp >> 18)));
                out.put(p++, (byte) (0x80 | ((cp >> 12) & 0x3F)));
                out.put(p++, (byte) (0x80 | ((cp >> 6) & 0x3F)));
                out.put(p++, (byte) (0x80 | (cp & 0x3F)));
            } else if (Character.isSurrogate(c)) {
                out.put(p++, (byte) '?');
            } else {
                out.put(p++, (byte) (0xE0 | (c >> 12)));
                out.put(p++, (byte) (0x80 | ((c >> 6) & 0x3F)));
                out.put(p++, (byte) (0x80 | (c & 0x3F)));
            }
        }
        return p;
    }
}
