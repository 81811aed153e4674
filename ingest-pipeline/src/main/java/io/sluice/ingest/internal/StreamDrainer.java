package io.sluice.ingest.internal;

import io.sluice.ingest.IngestConfig;
import io.sluice.redis.RedisEndpoint;
import io.sluice.redis.StreamGroups;

import io.lettuce.core.Consumer;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.RedisBusyException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XAutoClaimArgs;
import io.lettuce.core.XClaimArgs;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.XTrimArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.models.stream.ClaimedMessages;
import io.lettuce.core.models.stream.PendingMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Set;
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
 * Guarantee: no loss — an entry is acknowledged only after its rows are in ClickHouse (or dead-lettered).
 * Duplicates: a worker killed between the INSERT and the XACK leaves entries that are taken over and inserted
 * again. With {@code _sluice_entry String, _sluice_index UInt32} columns in the table (filled by Sluice), rows
 * of redelivered entries — and of a batch whose INSERT outcome is unknown — that are already in the table are
 * skipped: exactly-once rows, except for an INSERT still running on the server when that check runs (keep
 * {@code redis.claim.idle.ms} above {@code insert.timeout.ms}). Without those columns: at-least-once,
 * duplicates bounded by the batches in flight at the crash.
 */
final class StreamDrainer {
    private static final Logger LOG = LoggerFactory.getLogger(StreamDrainer.class);

    private final SinkContext ctx;
    private final RedisEndpoint endpoint;
    private final byte[] key;
    private final String stream;
    private final byte[] group;
    private final byte[] me;
    private final BatchInserter inserter;
    private final RedisDeadLetters deadLetters;
    private final boolean takeover;
    private final IntConsumer onLanded;
    /** Non-null when the table has the entry columns. */
    private final IdempotentInsert idempotent;
    private final Thread thread;
    private volatile boolean running = true;
    private boolean recoverOwn; // drainer thread only
    private static final long TRIM_INTERVAL_NANOS = 100_000_000L;
    private long lastTrimNanos;
    private boolean minIdTrim;
    private double eventsPerEntry = RedisStreamSink.EVENTS_PER_ENTRY; // drainer thread only
    /** The drainer thread's connection: one server's or the cluster's commands behind their common interface. */
    private RedisClusterCommands<byte[], byte[]> redis;

    StreamDrainer(SinkContext ctx, RedisEndpoint endpoint, byte[] key, BatchInserter inserter, RedisDeadLetters deadLetters,
                  boolean takeover, int index, IntConsumer onLanded) {
        this.ctx = ctx;
        this.idempotent = inserter.format().provenance() == RowFormat.Provenance.ENTRIES
                ? new IdempotentInsert(ctx.target, ctx.config.rowEncoder(), RowFormat.Provenance.ENTRIES) : null;
        this.endpoint = endpoint;
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
        long busy = ctx.config.lingerMs() + ctx.config.insertTimeoutMs();
        if (takeover && index == 0 && ctx.config.redisClaimIdleMs() <= busy) {
            // an entry's idle time runs from its delivery through the linger and the first INSERT attempt (only between
            // attempts does refreshOwnership reset it): a shorter takeover lets another live worker claim a batch whose
            // INSERT is still running, and insert it again (FaultsTest saw 1,921 rows of 999 with 300 ms on a busy machine)
            LOG.warn("{}={} is not above {} + {} = {} ms: a live worker's batch can be taken over while its INSERT runs",
                    IngestConfig.REDIS_CLAIM_IDLE_MS, ctx.config.redisClaimIdleMs(), IngestConfig.LINGER_MS,
                    IngestConfig.INSERT_TIMEOUT_MS, busy);
        }
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

    @SuppressWarnings("unchecked") // Lettuce's xreadgroup takes generic varargs of StreamOffset
    private void run() {
        Backoff backoff = new Backoff(ctx.config.retryInitialMs(), ctx.config.retryMaxMs());
        long claimIntervalNanos = ctx.config.redisClaimIdleMs() * 500_000L;
        long nextClaim = System.nanoTime();
        RedisEndpoint.Link connection = null;
        while (running) {
            try {
                if (connection == null) {
                    connection = endpoint.connect();
                    redis = connection.sync();
                    ensureGroup();
                    minIdTrim = supportsMinIdTrim(redis.info("server"));
                }
                if (takeover && System.nanoTime() - nextClaim >= 0) {
                    claimAndLand();
                    nextClaim = System.nanoTime() + claimIntervalNanos;
                }
                if (recoverOwn) {
                    // entries delivered to us whose reply was lost (connection dropped): re-read our own pending list
                    List<StreamMessage<byte[], byte[]>> own = redis.xreadgroup(Consumer.from(group, me),
                            XReadArgs.Builder.count(entriesPerBatch()), XReadArgs.StreamOffset.from(key, "0"));
                    if (own.isEmpty()) {
                        recoverOwn = false;
                    } else {
                        land(own, true);
                    }
                    continue;
                }
                List<StreamMessage<byte[], byte[]>> batch = read();
                if (!batch.isEmpty()) {
                    land(batch, false);
                } else if (minIdTrim) {
                    trimAcknowledged(false); // idle: trim what the last acknowledgements left
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

    /** XTRIM MINID exists from Redis 6.2 on; older servers get XDEL after XACK. */
    static boolean supportsMinIdTrim(String serverInfo) {
        for (String line : serverInfo.split("\r?\n")) {
            if (line.startsWith("redis_version:")) {
                String[] v = line.substring("redis_version:".length()).trim().split("\\.");
                int major = Integer.parseInt(v[0]);
                int minor = v.length > 1 ? Integer.parseInt(v[1]) : 0;
                return major > 6 || major == 6 && minor >= 2;
            }
        }
        return false;
    }

    /**
     * Entries to ask for so that a batch holds about {@code batch.rows} events: Sluice's entries pack up to
     * EVENTS_PER_ENTRY events, entries from other writers may hold one; the estimate follows what was read.
     */
    private int entriesPerBatch() {
        return (int) Math.max(1, Math.min(ctx.config.batchRows(), ctx.config.batchRows() / eventsPerEntry));
    }

    private void observe(List<StreamMessage<byte[], byte[]>> read, int events) {
        if (!read.isEmpty()) {
            eventsPerEntry = Math.max(1.0, (double) events / read.size());
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

    @SuppressWarnings("unchecked") // Lettuce's xreadgroup takes generic varargs of StreamOffset
    private List<StreamMessage<byte[], byte[]>> read() {
        long lingerEnd = System.nanoTime() + ctx.config.lingerMs() * 1_000_000L;
        Consumer<byte[]> consumer = Consumer.from(group, me);
        List<StreamMessage<byte[], byte[]>> out = new ArrayList<>();
        int maxEntries = entriesPerBatch();
        List<StreamMessage<byte[], byte[]>> got = redis.xreadgroup(consumer, XReadArgs.Builder.count(maxEntries).block(500),
                XReadArgs.StreamOffset.lastConsumed(key));
        out.addAll(got);
        while (!got.isEmpty() && out.size() < maxEntries && running) {
            long waitMs = (lingerEnd - System.nanoTime()) / 1_000_000L;
            if (waitMs <= 0) {
                break;
            }
            got = redis.xreadgroup(consumer, XReadArgs.Builder.count(maxEntries - out.size()).block(waitMs),
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
                    .startId(cursor).count(entriesPerBatch()));
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
                    List<byte[]> events = StreamEntries.events(m);
                    for (int k = 0; k < events.size(); k++) {
                        letters.add(new DeadLetters.Letter(events.get(k), "delivered " + deliveries.get(m.getId())
                                + " times without being acknowledged (redis.max.deliveries=" + ctx.config.redisMaxDeliveries()
                                + "): workers crashed or stalled on it", stream + "/" + m.getId() + "#" + k));
                    }
                }
                deadLetters.write(letters);
                ctx.metrics.deadLettered(letters.size());
                acknowledge(poison.stream().map(StreamMessage::getId).toArray(String[]::new));
            }
            if (!retry.isEmpty()) {
                land(retry, true);
            }
        } while (running && !"0-0".equals(cursor));
    }

    /** A row's origin: its stream entry and its position in the entry. */
    record Origin(String entryId, int index) {
        @Override
        public String toString() {
            return entryId + "#" + index;
        }
    }

    /**
     * @param redelivered the entries were delivered before (taken over, or re-read after an error): with entry
     *                    columns in the table, rows of them already in ClickHouse are skipped
     */
    private void land(List<StreamMessage<byte[], byte[]>> msgs, boolean redelivered) {
        RowFormat format = inserter.format();
        boolean skipLanded = redelivered && format.provenance() == RowFormat.Provenance.ENTRIES;
        Set<String> landed = skipLanded ? landedRows(msgs.stream().map(StreamMessage::getId).toList()) : Set.of();
        RowBatch<Origin> batch = new RowBatch<>(msgs.size() * 16, msgs.size() * 4096);
        List<DeadLetters.Letter> unencodable = new ArrayList<>();
        String[] ids = new String[msgs.size()];
        int events = 0;
        for (int i = 0; i < msgs.size(); i++) {
            StreamMessage<byte[], byte[]> m = msgs.get(i);
            ids[i] = m.getId();
            List<byte[]> evs = StreamEntries.events(m);
            events += evs.size();
            for (int k = 0; k < evs.size(); k++) {
                if (!landed.isEmpty() && landed.contains(m.getId() + "#" + k)) {
                    ctx.metrics.duplicatesSkipped(1);
                    continue;
                }
                try {
                    format.append(batch, format.encode(evs.get(k)), m.getId(), k, new Origin(m.getId(), k));
                } catch (IllegalArgumentException e) {
                    unencodable.add(new DeadLetters.Letter(evs.get(k), e.getMessage(), stream + "/" + m.getId() + "#" + k));
                }
            }
        }
        if (!unencodable.isEmpty()) {
            deadLetters.write(unencodable);
            ctx.metrics.deadLettered(unencodable.size());
        }
        if (!landed.isEmpty()) {
            LOG.info("drainer {}: {} rows of {} redelivered entries were already in {}; not inserting them again",
                    new String(me, StandardCharsets.UTF_8), landed.size(), msgs.size(), ctx.config.table());
        }
        observe(msgs, events);
        // With entry columns every attempt is idempotent at the server (rows of these entries already in the table
        // are skipped by the INSERT itself), under one query_id per batch: a timed-out INSERT that still runs, or
        // arrives late, cannot double a row, and two attempts never run at once.
        java.util.function.Function<RowBatch<Origin>, IdempotentInsert.Statement> statement = idempotent == null ? null
                : b -> idempotent.entries("sluice-" + ctx.config.table() + "-" + stream + "-" + b.tag(0).entryId()
                        + "-" + b.tag(0).index());
        inserter.insert(batch, this::refreshOwnership, o -> stream + "/" + o, java.util.Map.of(), statement, ctx::givingUp);
        acknowledge(ids);
        onLanded.accept(events);
    }

    /** While a batch waits for ClickHouse, keep its entries ours (XCLAIM JUSTID resets their idle time). */
    private RowBatch<Origin> refreshOwnership(RowBatch<Origin> batch, io.sluice.ingest.IngestException failure) {
        List<String> entries = batch.tags().stream().map(Origin::entryId).distinct().toList();
        try {
            redis.xclaim(key, Consumer.from(group, me), XClaimArgs.Builder.justid(), entries.toArray(String[]::new));
        } catch (RedisException e) {
            LOG.debug("cannot refresh ownership of {} entries: {}", entries.size(), e.toString());
        }
        // No landed-rows check here: the INSERT that timed out may still be running on the server, so a check now
        // could find nothing and the retry would double the rows. The retry is idempotent instead (see land()).
        return batch;
    }

    /** Rows of these entries already in the table, as "entryId#index". */
    private Set<String> landedRows(List<String> entryIds) {
        Set<String> out = new HashSet<>();
        for (int from = 0; from < entryIds.size(); from += 1_000) {
            StringBuilder in = new StringBuilder();
            for (String id : entryIds.subList(from, Math.min(entryIds.size(), from + 1_000))) {
                in.append(in.length() == 0 ? "'" : ",'").append(id).append('\'');
            }
            String body = ctx.http.query("SELECT " + ClickHouseTarget.ENTRY_COLUMN + ", " + ClickHouseTarget.INDEX_COLUMN
                    + " FROM " + ctx.config.table() + " WHERE " + ClickHouseTarget.ENTRY_COLUMN + " IN (" + in + ") FORMAT TabSeparated");
            for (String line : ClickHouseTarget.lines(body)) {
                out.add(line.replace('\t', '#'));
            }
        }
        return out;
    }

    /**
     * Removes every entry below the stream's groups' floor ({@link StreamGroups#floor}: per group, the oldest pending
     * entry, or the one after its last-delivered id): entries below it were delivered to every group and are no
     * longer pending, so they were acknowledged — that is, in ClickHouse or dead-lettered. The same rule as
     * redis-transport's producer trimming, so a second group on the stream (an operator's, a replay) is never cut
     * short either. {@code XTRIM MINID} (Redis 6.2+) removes whole stream nodes cheaply, unlike XDEL of each id,
     * which costs Redis hundreds of ms per 10,000 ids and stalls every XADD meanwhile (measured).
     * At most every {@link #TRIM_INTERVAL_NANOS} unless forced.
     */
    private void trimAcknowledged(boolean force) {
        long now = System.nanoTime();
        if (!force && now - lastTrimNanos < TRIM_INTERVAL_NANOS) {
            return;
        }
        lastTrimNanos = now;
        long floor = StreamGroups.floor(redis, key);
        if (floor == Long.MAX_VALUE || floor <= 0) {
            return; // no group, or nothing delivered yet
        }
        redis.xtrim(key, XTrimArgs.Builder.minId(StreamGroups.entryId(floor)));
    }

    /** XACK then XDEL, retried until Redis takes them: the rows are in ClickHouse, giving up would duplicate them. */
    private void acknowledge(String[] ids) {
        Backoff backoff = new Backoff(ctx.config.retryInitialMs(), ctx.config.retryMaxMs());
        while (true) {
            try {
                redis.xack(key, group, ids);
                if (minIdTrim) {
                    trimAcknowledged(false);
                } else {
                    redis.xdel(key, ids);
                }
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
