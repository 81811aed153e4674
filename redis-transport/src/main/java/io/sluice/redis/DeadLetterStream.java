package io.sluice.redis;

import io.lettuce.core.RedisException;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A dead-letter stream of events: one entry per event, {@code XADD <key> * payload <event> error <why> source <where>}
 * (for ingest's stream strategies, {@code <stream>:dead-letters}; {@code source} is {@code <stream>/<entry id>#<index>}).
 * Never trimmed: an operator inspects and replays or deletes them. Thread-safe (one connection, opened on first use;
 * Lettuce reconnects it after a failure).
 *
 * <p>Not the format of {@link RedisStreamsConsumer}'s dead letters, which copy a whole entry's fields and add
 * {@code dlq.*} fields: there an entry is one event already.
 */
public final class DeadLetterStream implements AutoCloseable {
    private static final byte[] PAYLOAD = bytes("payload");
    private static final byte[] ERROR = bytes("error");
    private static final byte[] SOURCE = bytes("source");

    /** One event given up: its bytes, why, and where it came from. */
    public record Letter(byte[] payload, String error, String source) {
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
     * Appends the letters in order and returns once Redis acknowledged each. A failure throws a {@link RedisStreamException}
     * (letters before the failing one are stored; the caller retries the whole list, at-least-once).
     */
    public synchronized void append(List<Letter> letters) {
        try {
            if (connection == null) {
                connection = endpoint.connect();
            }
            for (Letter l : letters) {
                connection.sync().xadd(key, PAYLOAD, l.payload(), ERROR, bytes(l.error()), SOURCE, bytes(l.source()));
            }
        } catch (RedisException e) {
            throw new RedisStreamException("cannot append to dead-letter stream " + key() + ": " + e, e);
        }
    }

    @Override
    public synchronized void close() {
        if (connection != null) {
            connection.close();
            connection = null;
        }
    }
}
