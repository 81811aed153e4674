package io.sluice.ingest.internal;

import io.sluice.ingest.IngestConfig;
import io.sluice.redis.DeadLetterStream;
import io.sluice.redis.GroupReader;
import io.sluice.redis.RedisEndpoint;
import io.sluice.redis.RedisStreamException;
import io.sluice.redis.StreamEntry;
import io.sluice.redis.StreamWriter;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.IntConsumer;

/**
 * One member of the stream's consumer group, on its own thread, reading through redis-transport's
 * {@link GroupReader} (its own connection; one Redis server or a cluster). Loop:
 * <ol>
 *   <li>every {@code redis.claim.idle.ms / 2}: XAUTOCLAIM entries idle for {@code redis.claim.idle.ms} at any
 *       member (a dead worker, or this process before a crash), through redis-transport's one claim path
 *       ({@link GroupReader#claimIdle(String, long, int, int, DeadLetterStream)}, also {@code RedisStreamsConsumer}'s):
 *       an entry already delivered more than {@code redis.max.deliveries} times goes to the dead-letter stream
 *       instead (a poison entry that keeps killing workers must not stop the flow);</li>
 *   <li>XREADGROUP up to {@code batch.rows} new entries, waiting up to {@code linger.ms} to fill the batch;</li>
 *   <li>one INSERT (retry/bisect/dead-letter in {@link BatchInserter}); while retrying, the worker re-XCLAIMs its
 *       entries (JUSTID, resetting their idle time) so that a live but waiting worker is not taken over;</li>
 *   <li>XACK the entries — only after ClickHouse accepted (or they were dead-lettered) — after which the reader
 *       removes what every group acknowledged from the stream.</li>
 * </ol>
 * An entry whose packed field does not parse (see {@link StreamEntry#malformed()}) is dead-lettered whole (its raw
 * field, the error naming the entry and the byte offset) and acknowledged with its batch: it would fail on every
 * read, and retrying it would stop the drainer.
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
    private final GroupReader reader;
    private final String stream;
    private final BatchInserter inserter;
    private final DeadLetters deadLetters;
    /** Where the claim path gives up entries delivered too often (the sink's dead-letter stream). */
    private final DeadLetterStream deadLetterStream;
    private final boolean takeover;
    private final IntConsumer onLanded;
    /** Non-null when the table has the entry columns. */
    private final IdempotentInsert idempotent;
    private final Thread thread;
    private volatile boolean running = true;
    private boolean recoverOwn; // drainer thread only
    private double eventsPerEntry = StreamWriter.EVENTS_PER_ENTRY; // drainer thread only

    StreamDrainer(SinkContext ctx, RedisEndpoint endpoint, String stream, BatchInserter inserter, DeadLetters deadLetters,
                  DeadLetterStream deadLetterStream, boolean takeover, int index, IntConsumer onLanded) {
        this.ctx = ctx;
        this.idempotent = inserter.format().provenance() == RowFormat.Provenance.ENTRIES
                ? new IdempotentInsert(ctx.target, ctx.config.rowEncoder(), RowFormat.Provenance.ENTRIES) : null;
        this.stream = stream;
        // unique per process run: after a crash the new process claims the old name's entries (XAUTOCLAIM)
        this.reader = new GroupReader(endpoint, stream, ctx.config.redisGroup(),
                ctx.config.name() + "-" + ProcessHandle.current().pid() + "-" + index);
        this.inserter = inserter;
        this.deadLetters = deadLetters;
        this.deadLetterStream = deadLetterStream;
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

    private void run() {
        Backoff backoff = new Backoff(ctx.config.retryInitialMs(), ctx.config.retryMaxMs());
        long claimIntervalNanos = ctx.config.redisClaimIdleMs() * 500_000L;
        long nextClaim = System.nanoTime();
        while (running) {
            try {
                reader.open();
                if (takeover && System.nanoTime() - nextClaim >= 0) {
                    claimAndLand();
                    nextClaim = System.nanoTime() + claimIntervalNanos;
                }
                if (recoverOwn) {
                    // entries delivered to us whose reply was lost (connection dropped): re-read our own pending list
                    List<StreamEntry> own = reader.readOwnPending(entriesPerBatch());
                    if (own.isEmpty()) {
                        recoverOwn = false;
                    } else {
                        land(own, true);
                    }
                    continue;
                }
                List<StreamEntry> batch = reader.read(entriesPerBatch(), ctx.config.lingerMs(), () -> running);
                if (!batch.isEmpty()) {
                    land(batch, false);
                } else {
                    reader.trimAcknowledged(); // idle: trim what the last acknowledgements left
                }
                backoff.reset();
            } catch (GroupReader.GroupLostException e) {
                recoverOwn = true; // the reader recreated the group: read again at once
            } catch (RedisStreamException e) {
                recoverOwn = true;
                pause(backoff, e);
            } catch (RuntimeException e) {
                recoverOwn = true;
                LOG.error("drainer {} failed; retrying", reader.member(), e);
                pause(backoff, e);
            }
        }
        reader.close();
    }

    private void pause(Backoff backoff, RuntimeException e) {
        if (!running) {
            return;
        }
        LOG.warn("drainer {}: Redis unavailable ({}); retrying", reader.member(), e.toString());
        try {
            backoff.pause();
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    /**
     * Entries to ask for so that a batch holds about {@code batch.rows} events: Sluice's entries pack up to
     * {@link StreamWriter#EVENTS_PER_ENTRY} events, entries from other writers may hold one; the estimate follows
     * what was read.
     */
    private int entriesPerBatch() {
        return EntryBatch.entriesFor(ctx.config.batchRows(), eventsPerEntry);
    }

    private void observe(List<StreamEntry> read, int events) {
        if (!read.isEmpty()) {
            eventsPerEntry = Math.max(1.0, (double) events / read.size());
        }
    }

    /**
     * Takes over entries idle at any member through {@link GroupReader#claimIdle(String, long, int, int, DeadLetterStream)},
     * redis-transport's one claim path: an entry delivered more than {@code redis.max.deliveries} times is given up
     * there (dead-lettered in the one format, and acknowledged); the rest are landed as redelivered entries.
     */
    private void claimAndLand() {
        String cursor = "0-0";
        do {
            GroupReader.Claimed claimed = reader.claimIdle(cursor, ctx.config.redisClaimIdleMs(), entriesPerBatch(),
                    ctx.config.redisMaxDeliveries(), deadLetterStream);
            cursor = claimed.cursor();
            if (claimed.deadLetters() > 0) {
                ctx.metrics.deadLettered(claimed.deadLetters());
            }
            if (!claimed.entries().isEmpty()) {
                LOG.info("drainer {} took over {} entries idle for >= {} ms", reader.member(), claimed.entries().size(),
                        ctx.config.redisClaimIdleMs());
                land(claimed.entries(), true);
            }
        } while (running && !"0-0".equals(cursor));
    }

    /**
     * Lands one batch (what it holds: {@link EntryBatch}): dead letters first, then one INSERT (retried, bisected), then
     * XACK of every entry.
     *
     * @param redelivered the entries were delivered before (taken over, or re-read after an error): with entry
     *                    columns in the table, rows of them already in ClickHouse are skipped
     */
    private void land(List<StreamEntry> msgs, boolean redelivered) {
        RowFormat format = inserter.format();
        boolean skipLanded = redelivered && format.provenance() == RowFormat.Provenance.ENTRIES;
        Set<String> landed = skipLanded ? landedRows(msgs.stream().map(StreamEntry::id).toList()) : Set.of();
        for (StreamEntry m : msgs) {
            if (m.isMalformed()) {
                LOG.warn("drainer {}: {}; dead-lettering the entry", reader.member(), m.malformed().getMessage());
            }
        }
        EntryBatch batch = EntryBatch.of(stream, msgs, format, landed);
        if (!batch.letters.isEmpty()) {
            deadLetters.write(batch.letters);
            ctx.metrics.deadLettered(batch.letters.size());
        }
        if (batch.skipped > 0) {
            ctx.metrics.duplicatesSkipped(batch.skipped);
            LOG.info("drainer {}: {} rows of {} redelivered entries were already in {}; not inserting them again",
                    reader.member(), batch.skipped, msgs.size(), ctx.config.table());
        }
        observe(msgs, batch.events);
        // With entry columns every attempt is idempotent at the server (rows of these entries already in the table
        // are skipped by the INSERT itself), under one query_id per batch: a timed-out INSERT that still runs, or
        // arrives late, cannot double a row, and two attempts never run at once.
        java.util.function.Function<RowBatch<EntryBatch.Origin>, IdempotentInsert.Statement> statement = idempotent == null ? null
                : b -> idempotent.entries(EntryBatch.queryId(ctx.config.table(), stream, b));
        inserter.insert(batch.rows, this::refreshOwnership, o -> stream + "/" + o, java.util.Map.of(), statement, ctx::givingUp);
        acknowledge(batch.ids);
        onLanded.accept(batch.events);
    }

    /** While a batch waits for ClickHouse, keep its entries ours (XCLAIM JUSTID resets their idle time). */
    private RowBatch<EntryBatch.Origin> refreshOwnership(RowBatch<EntryBatch.Origin> batch, io.sluice.ingest.IngestException failure) {
        List<String> entries = batch.tags().stream().map(EntryBatch.Origin::entryId).distinct().toList();
        try {
            reader.keep(entries);
        } catch (RedisStreamException e) {
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

    /** XACK, retried until Redis takes it: the rows are in ClickHouse, giving up would duplicate them. */
    private void acknowledge(String[] ids) {
        Backoff backoff = new Backoff(ctx.config.retryInitialMs(), ctx.config.retryMaxMs());
        while (true) {
            try {
                reader.acknowledge(ids);
                return;
            } catch (RedisStreamException e) {
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
