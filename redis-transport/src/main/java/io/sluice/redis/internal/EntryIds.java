package io.sluice.redis.internal;

/**
 * Maps Redis stream entry ids ({@code <ms>-<seq>}) to Sluice's {@code long} offsets and back, preserving order:
 *
 * <pre>
 *  63 62                                   22 21                  0
 * +--+---------------------------------------+---------------------+
 * | 0|  milliseconds part of the id (41 bits) | sequence (22 bits)  |
 * +--+---------------------------------------+---------------------+
 * </pre>
 *
 * 41 bits of milliseconds reach the year 2039 + 30; 22 bits of sequence allow 4,194,303 entries in one millisecond,
 * far beyond what one Redis stream accepts. Ids outside that range (hand-written ids) are rejected with
 * {@link IllegalArgumentException} rather than silently folded.
 */
public final class EntryIds {
    static final int SEQ_BITS = 22;
    static final long SEQ_MASK = (1L << SEQ_BITS) - 1;
    static final long MAX_MS = (1L << (63 - SEQ_BITS)) - 1;

    private EntryIds() {
    }

    public static long toOffset(String id) {
        int dash = id.indexOf('-');
        if (dash <= 0) {
            throw new IllegalArgumentException("not a stream entry id: '" + id + "'");
        }
        long ms = Long.parseLong(id, 0, dash, 10);
        long seq = Long.parseLong(id, dash + 1, id.length(), 10);
        if (ms < 0 || ms > MAX_MS || seq < 0 || seq > SEQ_MASK) {
            throw new IllegalArgumentException("stream entry id '" + id + "' does not fit a Sluice offset");
        }
        return (ms << SEQ_BITS) | seq;
    }

    public static String toId(long offset) {
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0, got " + offset);
        }
        return (offset >>> SEQ_BITS) + "-" + (offset & SEQ_MASK);
    }

    /** The millisecond part of an offset's id (Redis's own timestamp of the entry). */
    public static long millis(long offset) {
        return offset >>> SEQ_BITS;
    }

    /** The smallest offset at or after {@code epochMillis}. */
    public static long firstOffsetAt(long epochMillis) {
        return Math.max(0, Math.min(epochMillis, MAX_MS)) << SEQ_BITS;
    }
}
