package io.sluice.net.http.internal;

/** Strict UTF-8 checks (RFC 3629, table 3-7 of the Unicode standard). */
final class Utf8 {
    private Utf8() {
    }

    /**
     * The length (2–4) of the well-formed UTF-8 sequence that starts with the non-ASCII byte {@code b[i]} and ends
     * before {@code end}, or -1 if it is malformed: a stray continuation byte, an overlong form, a UTF-16 surrogate,
     * a code point above U+10FFFF, or a sequence cut short.
     */
    static int sequenceLength(byte[] b, int i, int end) {
        int b0 = b[i] & 0xFF;
        if (b0 < 0xC2) {
            return -1; // 0x80-0xBF continuation without a lead, 0xC0/0xC1 overlong 2-byte forms
        }
        if (b0 < 0xE0) {
            return i + 1 < end && isContinuation(b[i + 1] & 0xFF) ? 2 : -1;
        }
        if (b0 < 0xF0) {
            if (i + 2 >= end) {
                return -1;
            }
            int b1 = b[i + 1] & 0xFF;
            if ((b0 == 0xE0 && b1 < 0xA0) || (b0 == 0xED && b1 > 0x9F)) {
                return -1; // overlong 3-byte form, or a surrogate U+D800-U+DFFF
            }
            return isContinuation(b1) && isContinuation(b[i + 2] & 0xFF) ? 3 : -1;
        }
        if (b0 < 0xF5) {
            if (i + 3 >= end) {
                return -1;
            }
            int b1 = b[i + 1] & 0xFF;
            if ((b0 == 0xF0 && b1 < 0x90) || (b0 == 0xF4 && b1 > 0x8F)) {
                return -1; // overlong 4-byte form, or above U+10FFFF
            }
            return isContinuation(b1) && isContinuation(b[i + 2] & 0xFF) && isContinuation(b[i + 3] & 0xFF) ? 4 : -1;
        }
        return -1;
    }

    private static boolean isContinuation(int b) {
        return (b & 0xC0) == 0x80;
    }
}
