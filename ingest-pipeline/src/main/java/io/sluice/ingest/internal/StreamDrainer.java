package io.sluice.ingest.internal;

import io.lettuce.core.Consumer;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.RedisBusyException;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XAutoClaimArgs;
import io.lettuce.core.XClaimArgs;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.models.stream.ClaimedMessages;
import io.lettuce.core.models.stream.PendingMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntConsumer;

/**
 * One member of the stream's consumer group, on its own thread and connection. Loop:
 * <ol>
 *   <li>every {@code redis.claim.idle.ms / 2}: XAUTOCLAIM entries idle for {@code redis.claim.idle.ms} at any
 *       member (a dead worker, or this process before a crash); an entry already delivered more than
 *       {@code redis.max.deliveries} times goes to the dead-letter stream instead (a poison entry that keeps
 *       killing workers must not stop the flow);</li>
 *   <li>XREADGROUP up to {@code batch.rows} new entries, waiting up to {@code linger.ms} to fill the batch;</li>
 *   <li>one INSERT (retry/bisect/dead-letter in {@link BatchInserter}); while retrying, the worker re-XCLAIMs its
 *       entries (JUSTID, resetting their idle time) so that a live but waiting worker is not taken over;</li>
 *   <li>XACK then XDEL the entries — only after ClickHouse accepted (or they were dead-lettered).</li>
 * </ol>
 * After any Redis error the drainer first re-reads its own pending entries (XREADGROUP from id 0): a reply lost
 * with the connection must not leave entries waiting for the takeover timeout.
 * Guarantee: at-least-once. An entry is acknowledged only after its row is in ClickHouse, so no loss; a worker
 * killed between the INSERT and the XACK leaves entries that are claimed and inserted again (duplicates bounded
 * by the batches in flight at the crash).
 */
final class StreamDrainer {
    private static final Logger LOG = LoggerFactory.getLogger(StreamDrainer.class);

    private final SinkContext ctx;
    private final RedisClient client;
    private final byte[] key;
    private final String stream;
    private final byte[] group;
    private final byte[] me;
    private final BatchInserter inserter;
    private final RedisDeadLetters deadLetters;
    private final boolean takeover;
    private final IntConsumer onLanded;
    private final Thread thread;
    private volatile boolean running = true;
    private boolean recoverOwn; // drainer thread only
    private RedisCommands<byte[], byte[]> redis;

    StreamDrainer(SinkContext ctx, RedisClient client, byte[] key, BatchInserter inserter, RedisDeadLetters deadLetters,
                  boolean takeover, int index, IntConsumer onLanded) {
        this.ctx = ctx;
        this.client = client;
        this.key = key;
        this.stream = new String(key, StandardCharsets.UTF_8);
        this.group = ctx.config.redisGroup().getBytes(StandardCharsets.UTF_8);
        // unique per process run: after a crash the new process claims the old name's entries (XAUTOCLAIM)
        this.me = (ctx.config.name() + "-" + ProcessHandle.current().pid() + "-" + index).getBytes(StandardCharsets.UTF_8);
        this.inserter = inserter;
        this.deadLetters = deadLetters;
        this.takeover = takeover;
        this.onLanded = onLanded;
        this.thread = new Thread(this::run, "sluice-ingest-" + ctx.config.name() + "-drainer-" + index);
    }

    void start() {
        thread.start();
    }

    boolean isAlive() {
        return thread.isAlive();
    }

    void stop() {
        running = false;
        try {
            thread.join(ctx.config.closeTimeoutMs() + 5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        Backoff backoff = new Backoff(ctx.config.retryInitialMs(), ctx.config.retryMaxMs());
        long claimIntervalNanos = ctx.config.redisClaimIdleMs() * 500_000L;
        long nextClaim = System.nanoTime();
        StatefulRedisConnection<byte[], byte[]> connection = null;
        while (running) {
            try {
                if (connection == null) {
                    connection = client.connect(ByteArrayCodec.INSTANCE);
                    redis = connection.sync();
                    ensureGroup();
                }
                if (takeover && System.nanoTime() - nextClaim >= 0) {
                    claimAndLand();
                    nextClaim = System.nanoTime() + claimIntervalNanos;
                }
                if (recoverOwn) {
                    // entries delivered to us whose reply was lost (connection dropped): re-read our own pending list
                    List<StreamMessage<byte[], byte[]>> own = redis.xreadgroup(Consumer.from(group, me),
                            XReadArgs.Builder.count(ctx.config.batchRows()), XReadArgs.StreamOffset.from(key, "0"));
                    if (own.isEmpty()) {
                        recoverOwn = false;
                    } else {
                        land(own);
                    }
                    continue;
                }
                List<StreamMessage<byte[], byte[]>> batch = read();
                if (!batch.isEmpty()) {
                    land(batch);
                }
                backoff.reset();
            } catch (RedisCommandExecutionException e) {
                recoverOwn = true;
                if (String.valueOf(e.getMessage()).startsWith("NOGROUP")) {
                    LOG.warn("stream {} lost its group (Redis restarted without data?); recreating it", stream);
                    ensureGroupQuietly();
                } else {
                    pause(backoff, e);
                }
            } catch (RedisException e) {
                recoverOwn = true;
                pause(backoff, e);
            } catch (RuntimeException e) {
                recoverOwn = true;
                LOG.error("drainer {} failed; retrying", new String(me, StandardCharsets.UTF_8), e);
                pause(backoff, e);
            }
        }
        if (connection != null) {
            connection.close();
        }
    }

    private void pause(Backoff backoff, RuntimeException e) {
        if (!running) {
            return;
        }
        LOG.warn("drainer {}: Redis unavailable ({}); retrying", new String(me, StandardCharsets.UTF_8), e.toString());
        try {
            backoff.pause();
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    private void ensureGroup() {
        try {
            redis.xgroupCreate(XReadArgs.StreamOffset.from(key, "0"), group, new XGroupCreateArgs().mkstream(true));
        } catch (RedisBusyException e) {
            // BUSYGROUP: exists
        }
    }

    private void ensureGroupQuietly() {
        try {
            ensureGroup();
        } catch (RedisException e) {
            LOG.warn("cannot create group yet: {}", e.toString());
        }
    }

    private List<StreamMessage<byte[], byte[]>> read() {
        int max = ctx.config.batchRows();
        long lingerEnd = System.nanoTime() + ctx.config.lingerMs() * 1_000_000L;
        Consumer<byte[]> consumer = Consumer.from(group, me);
        List<StreamMessage<byte[], byte[]>> out = new ArrayList<>();
        List<StreamMessage<byte[], byte[]>> got = redis.xreadgroup(consumer, XReadArgs.Builder.count(max).block(500),
                XReadArgs.StreamOffset.lastConsumed(key));
        out.addAll(got);
        while (!got.isEmpty() && out.size() < max && running) {
            long waitMs = (lingerEnd - System.nanoTime()) / 1_000_000L;
            if (waitMs <= 0) {
                break;
            }
            got = redis.xreadgroup(consumer, XReadArgs.Builder.count(max - out.size()).block(waitMs),
                    XReadArgs.StreamOffset.lastConsumed(key));
            out.addAll(got);
        }
        return out;
    }

    private void claimAndLand() {
        String cursor = "0-0";
        do {
            ClaimedMessages<byte[], byte[]> claimed = redis.xautoclaim(key, new XAutoClaimArgs<byte[]>()
                    .consumer(Consumer.from(group, me)).minIdleTime(ctx.config.redisClaimIdleMs())
                    .startId(cursor).count(ctx.config.batchRows()));
            cursor = claimed.getId();
            List<StreamMessage<byte[], byte[]>> msgs = new ArrayList<>();
            for (StreamMessage<byte[], byte[]> m : claimed.getMessages()) {
                if (m != null && m.getBody() != null && !m.getBody().isEmpty()) {
                    msgs.add(m);
                }
            }
            if (msgs.isEmpty()) {
                continue;
            }
            LOG.info("drainer {} took over {} entries idle for >= {} ms", new String(me, StandardCharsets.UTF_8), msgs.size(),
                    ctx.config.redisClaimIdleMs());
            Map<String, Long> deliveries = new HashMap<>();
            for (PendingMessage p : redis.xpending(key, group, Range.create(msgs.get(0).getId(), msgs.get(msgs.size() - 1).getId()),
                    Limit.from(msgs.size()))) {
                deliveries.put(p.getId(), p.getRedeliveryCount());
            }
            List<StreamMessage<byte[], byte[]>> poison = new ArrayList<>();
            List<StreamMessage<byte[], byte[]>> retry = new ArrayList<>();
            for (StreamMessage<byte[], byte[]> m : msgs) {
                (deliveries.getOrDefault(m.getId(), 0L) > ctx.config.redisMaxDeliveries() ? poison : retry).add(m);
            }
            if (!poison.isEmpty()) {
                List<DeadLetters.Letter> letters = new ArrayList<>();
                for (StreamMessage<byte[], byte[]> m : poison) {
                    letters.add(new DeadLetters.Letter(event(m), "delivered " + deliveries.get(m.getId())
                            + " times without being acknowledged (redis.max.deliveries=" + ctx.config.redisMaxDeliveries()
                            + "): workers crashed or stalled on it", stream + "/" + m.getId()));
                }
                deadLetters.write(letters);
                ctx.metrics.deadLettered(letters.size());
                acknowledge(poison.stream().map(StreamMessage::getId).toArray(String[]::new));
            }
            if (!retry.isEmpty()) {
                land(retry);
            }
        } while (running && !"0-0".equals(cursor));
    }

    private static byte[] event(StreamMessage<byte[], byte[]> m) {
        for (Map.Entry<byte[], byte[]> e : m.getBody().entrySet()) {
            if (Arrays.equals(e.getKey(), RedisStreamSink.FIELD)) {
                return e.getValue();
            }
        }
        return new byte[0];
    }

    private void land(List<StreamMessage<byte[], byte[]>> msgs) {
        RowFormat format = inserter.format();
        RowBatch<String> batch = new RowBatch<>(msgs.size(), msgs.size() * 128);
        List<DeadLetters.Letter> unencodable = new ArrayList<>();
        String[] ids = new String[msgs.size()];
        for (int i = 0; i < msgs.size(); i++) {
            StreamMessage<byte[], byte[]> m = msgs.get(i);
            ids[i] = m.getId();
            byte[] ev = event(m);
            try {
                format.append(batch, format.encode(ev), m.getId());
            } catch (IllegalArgumentException e) {
                unencodable.add(new DeadLetters.Letter(ev, e.getMessage(), stream + "/" + m.getId()));
            }
        }
        if (!unencodable.isEmpty()) {
            deadLetters.write(unencodable);
            ctx.metrics.deadLettered(unencodable.size());
        }
        inserter.insert(batch, this::refreshOwnership, id -> stream + "/" + id);
        acknowledge(ids);
        onLanded.accept(ids.length);
    }

    /** While a batch waits for ClickHouse, keep its entries ours (XCLAIM JUSTID resets their idle time). */
    private RowBatch<String> refreshOwnership(RowBatch<String> batch, io.sluice.ingest.IngestException failure) {
        try {
            redis.xclaim(key, Consumer.from(group, me), XClaimArgs.Builder.justid(), batch.tags().toArray(String[]::new));
        } catch (RedisException e) {
            LOG.debug("cannot refresh ownership of {} entries: {}", batch.rows(), e.toString());
        }
        return batch;
    }

    /** XACK then XDEL, retried until Redis takes them: the rows are in ClickHouse, giving up would duplicate them. */
    private void acknowledge(String[] ids) {
        Backoff backoff = new Backoff(ctx.config.retryInitialMs(), ctx.config.retryMaxMs());
        while (true) {
            try {
                redis.xack(key, group, ids);
                redis.xdel(key, ids);
                return;
            } catch (RedisException e) {
                if (!running && ctx.givingUp()) {
                    LOG.error("could not XACK {} landed entries before close; they will be inserted again", ids.length);
                    return;
                }
                LOG.warn("XACK of {} landed entries failed, retrying: {}", ids.length, e.toString());
                try {
                    backoff.pause();
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
