package io.sluice.ingest.internal;

import io.sluice.redis.RedisEndpoint;

import io.lettuce.core.RedisException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Dead letters of the stream strategies: a Redis stream {@code <stream>:dead-letters} whose entries carry
 * {@code payload} (the event), {@code error} (ClickHouse's message or why it was given up) and {@code source}
 * (the original entry id). Never trimmed by Sluice: an operator inspects and replays or deletes them.
 */
final class RedisDeadLetters implements DeadLetters {
    private static final Logger LOG = LoggerFactory.getLogger(RedisDeadLetters.class);
    private static final byte[] PAYLOAD = bytes("payload");
    private static final byte[] ERROR = bytes("error");
    private static final byte[] SOURCE = bytes("source");

    private final RedisEndpoint endpoint;
    private final byte[] key;
    private final SinkContext ctx;
    private RedisEndpoint.Link connection; // guarded by this

    RedisDeadLetters(RedisEndpoint endpoint, String stream, SinkContext ctx) {
        this.endpoint = endpoint;
        this.key = bytes(stream);
        this.ctx = ctx;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public synchronized void write(List<Letter> letters) {
        Backoff backoff = new Backoff(ctx.config.retryInitialMs(), ctx.config.retryMaxMs());
        while (true) {
            try {
                if (connection == null) {
                    connection = endpoint.connect();
                }
                for (Letter l : letters) {
                    connection.sync().xadd(key, PAYLOAD, l.payload(), ERROR, bytes(l.error()), SOURCE, bytes(l.source()));
                }
                LOG.warn("{} entr(ies) dead-lettered to {}; first error: {}", letters.size(), new String(key, StandardCharsets.UTF_8),
                        letters.get(0).error());
                return;
            } catch (RedisException e) {
                if (ctx.givingUp()) {
                    throw e;
                }
                LOG.warn("cannot write dead letters yet: {}", e.toString());
                try {
                    backoff.pause();
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    synchronized void close() {
        if (connection != null) {
            connection.close();
        }
    }
}
