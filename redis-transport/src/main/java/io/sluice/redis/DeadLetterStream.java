package io.sluice.redis;

import io.lettuce.core.RedisException;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * A dead-letter stream: the one format of everything redis-transport and ingest's stream strategies give up on. One
 * entry per event given up:
 *
 * <pre>
 * payload     the event's bytes (for an entry whose packed field does not parse: that raw field)
 * error       why it was given up
 * source      &lt;stream&gt;/&lt;entry id&gt;, with #&lt;index&gt; for an event of an entry holding several (packed, see {@link StreamWriter})
 * group       the consumer group that gave up, and
 * deliveries  how many times the group had delivered it: only for an entry given up after too many deliveries
 * k, ts, h.*  the event's key, timestamp and headers, for an entry in {@link RedisStreamsProducer}'s layout
 *             (where {@code v}, the value, is the payload)
 * </pre>
 *
 * {@link #lettersOf} turns an entry into its letters. Never trimmed: an operator inspects and replays or deletes them.
 * Written by {@link GroupReader#claimIdle(String, long, int, int, DeadLetterStream)} (the one claim path of
 * {@link RedisStreamsConsumer} and ingest's drainers: {@code <keyPrefix>{<topic>}:dlq} and
 * {@code <stream>:dead-letters}), and by ingest for rows ClickHouse rejects and malformed entries. Thread-safe (one
 * connection, opened on first use; Lettuce reconnects it after a failure).
 */
public final class DeadLetterStream implements AutoCloseable {
    private static final byte[] PAYLOAD = bytes("payload");
    private static final byte[] ERROR = bytes("error");
    private static final byte[] SOURCE = bytes("source");
    private static final byte[] GROUP = bytes("group");
    private static final byte[] DELIVERIES = bytes("deliveries");
    /** The value field of {@link RedisStreamsProducer}'s entries ({@code internal.StreamFields}). */
    private static final byte[] VALUE = {'v'};

    /**
     * One event given up: its bytes, why, where it came from, and (given up after too many deliveries) the group and
     * its delivery count; {@code fields}: the event's other fields in its stream's layout, copied as they are.
     */
    public record Letter(byte[] payload, String error, String source, String group, long deliveries, Map<byte[], byte[]> fields) {
        public Letter(byte[] payload, String error, String source) {
            this(payload, error, source, null, 0, Map.of());
        }
    }

    private final RedisEndpoint endpoint;
    private final byte[] key;
    private RedisEndpoint.Link connection; // guarded by this

    public DeadLetterStream(RedisEndpoint endpoint, String key) {
        this.endpoint = endpoint;
        this.key = bytes(key);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    public String key() {
        return new String(key, StandardCharsets.UTF_8);
    }

    /**
     * The letters of an entry of {@code stream} given up whole: one per event of an entry that holds events (packed,
     * or one event in field {@code e}), source {@code <stream>/<id>#<index>}; one for an entry whose packed field does
     * not parse (its raw field; the parse error, then {@code error} if given); one for an entry in another layout
     * ({@link RedisStreamsProducer}'s: its value {@code v} as payload, its other fields copied).
     *
     * @param error      why (for a malformed entry, null: the parse error says it)
     * @param group      the group giving up after too many deliveries, or null
     * @param deliveries the times the group had delivered it (with {@code group})
     */
    public static List<Letter> lettersOf(String stream, StreamEntry entry, String error, String group, long deliveries) {
        String source = stream + "/" + entry.id();
        if (entry.isMalformed()) {
            String why = error == null ? entry.malformed().getMessage() : entry.malformed().getMessage() + "; " + error;
            return List.of(new Letter(entry.malformed().field(), why, source, group, deliveries, Map.of()));
        }
        List<byte[]> events = entry.events();
        if (!events.isEmpty()) {
            List<Letter> out = new ArrayList<>(events.size());
            for (int k = 0; k < events.size(); k++) {
                out.add(new Letter(events.get(k), error, source + "#" + k, group, deliveries, Map.of()));
            }
            return out;
        }
        byte[] value = new byte[0];
        Map<byte[], byte[]> others = new java.util.LinkedHashMap<>();
        for (Map.Entry<byte[], byte[]> f : entry.fields().entrySet()) {
            if (Arrays.equals(f.getKey(), VALUE)) {
                value = f.getValue();
            } else {
                others.put(f.getKey(), f.getValue());
            }
        }
        return List.of(new Letter(value, error, source, group, deliveries, others));
    }

    /**
     * Appends the letters in order and returns once Redis acknowledged each. A failure throws a {@link RedisStreamException}
     * (letters before the failing one are stored; the caller retries the whole list, at-least-once).
     */
    public synchronized void append(List<Letter> letters) {
        try {
            if (connection == null) {
                connection = endpoint.connect();
            }
            for (Letter l : letters) {
                connection.sync().xadd(key, fieldsOf(l));
            }
        } catch (RedisException e) {
            throw new RedisStreamException("cannot append to dead-letter stream " + key() + ": " + e, e);
        }
    }

    /** The letter's fields in the order of the class comment, as {@code XADD} key/value pairs. */
    static Object[] fieldsOf(Letter l) {
        boolean counted = l.group() != null;
        Object[] kv = new Object[6 + (counted ? 4 : 0) + 2 * l.fields().size()];
        int i = 0;
        kv[i++] = PAYLOAD;
        kv[i++] = l.payload();
        kv[i++] = ERROR;
        kv[i++] = bytes(String.valueOf(l.error()));
        kv[i++] = SOURCE;
        kv[i++] = bytes(l.source());
        if (counted) {
            kv[i++] = GROUP;
            kv[i++] = bytes(l.group());
            kv[i++] = DELIVERIES;
            kv[i++] = bytes(Long.toString(l.deliveries()));
        }
        for (Map.Entry<byte[], byte[]> f : l.fields().entrySet()) {
            kv[i++] = f.getKey();
            kv[i++] = f.getValue();
        }
        return kv;
    }

    @Override
    public synchronized void close() {
        if (connection != null) {
            connection.close();
            connection = null;
        }
    }
}
