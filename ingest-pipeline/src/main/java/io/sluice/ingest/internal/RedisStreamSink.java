package io.sluice.ingest.internal;

import io.sluice.redis.RedisEndpoint;

import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.sluice.core.SluiceException.BackPressureException;
import io.sluice.core.SluiceException.ClosedException;
import io.sluice.ingest.EventSink;
import io.sluice.ingest.IngestException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Strategies redis-stream (one drainer) and worker-pool (N drainers, takeover, dead letters). The write path
 * ends at a pipelined XADD: writers put rows into a bounded queue; one writer thread (the only user of its
 * connection, so auto-flush can be off) drains up to 4096 events, packs them into entries of up to
 * {@link #EVENTS_PER_ENTRY} events ({@link StreamEntries}), sends the XADDs with one flush and completes each
 * caller's future when Redis acknowledged the entry holding its event. {@link StreamDrainer}s move entries to
 * ClickHouse and XACK+XDEL them only afterwards.
 *
 * <p><b>Trimming never removes an entry not yet in ClickHouse</b>: there is no MAXLEN trimming at all (MAXLEN ~
 * would drop pending entries). Drainers remove only acknowledged entries — {@code XTRIM MINID} below the group's
 * safe point on Redis 6.2+ (see {@link StreamDrainer}), XDEL after XACK on older servers — so the stream holds
 * the entries not yet landed, and it is bounded on the write path instead: when entries written by this sink
 * minus entries landed by its drainers reach {@code redis.max.pending}, the writer thread stops sending, the
 * queue fills and writers get {@link BackPressureException} after {@code block.ms}.
 *
 * <p>Redis down: XADD fails at once (disconnected commands are rejected, not buffered), the caller's future fails
 * with an {@link IngestException} — the event was not accepted; Lettuce reconnects in the background.
 */
final class RedisStreamSink implements EventSink {
    private static final Logger LOG = LoggerFactory.getLogger(RedisStreamSink.class);
    /** Most events packed into one stream entry (see {@link StreamEntries}). */
    static final int EVENTS_PER_ENTRY = 256;
    /** Most bytes packed into one stream entry. */
    static final int BYTES_PER_ENTRY = 256 << 10;

    private record Pending(byte[] row, CompletableFuture<Void> done) {
    }

    private final SinkContext ctx;
    private final RedisEndpoint endpoint;
    private final RedisEndpoint.Link connection;
    private final byte[] key;
    private final ArrayBlockingQueue<Pending> queue;
    private final Thread writer;
    private final List<StreamDrainer> drainers = new ArrayList<>();
    /** XADDs sent whose reply has not arrived yet, bounded so a slow Redis back-pressures the writer thread. */
    static final int MAX_UNACKNOWLEDGED_XADDS = 16_384;
    private final java.util.concurrent.Semaphore unacknowledged = new java.util.concurrent.Semaphore(MAX_UNACKNOWLEDGED_XADDS);
    private final AtomicLong written = new AtomicLong();
    private final AtomicLong landed = new AtomicLong();
    private final Object progress = new Object();
    private long acceptedCount; // guarded by progress
    private long doneCount;     // guarded by progress
    private volatile boolean closed;

    RedisStreamSink(SinkContext ctx, int workers, boolean takeover) {
        this.ctx = ctx;
        this.endpoint = new RedisEndpoint(ctx.config.redisUrl(), ctx.config.redisCluster(), ctx.config.redisClusterRefreshMs());
        this.connection = endpoint.connect();
        this.connection.connection().setAutoFlushCommands(false);
        this.key = ctx.config.redisStream().getBytes(StandardCharsets.UTF_8);
        this.queue = new ArrayBlockingQueue<>(ctx.config.bufferEvents());
        RedisDeadLetters deadLetters = new RedisDeadLetters(endpoint, ctx.config.redisStream() + ":dead-letters", ctx);
        BatchInserter inserter = ctx.inserter(ctx.format, Map.of(), deadLetters);
        for (int i = 0; i < workers; i++) {
            drainers.add(new StreamDrainer(ctx, endpoint, key, inserter, deadLetters, takeover, i, this::landed));
        }
        this.writer = new Thread(this::runWriter, "sluice-ingest-" + ctx.config.name() + "-xadd");
        this.writer.start();
        drainers.forEach(StreamDrainer::start);
    }

    private void landed(int entries) {
        landed.addAndGet(entries);
        synchronized (progress) {
            progress.notifyAll();
        }
    }

    @Override
    public CompletableFuture<Void> write(byte[] event) {
        if (closed) {
            throw new ClosedException("sink " + ctx.config.name() + " is closed");
        }
        // the stream carries the event as given (checked here) and the drainer encodes it for ClickHouse
        ctx.format.encode(event);
        Pending p = new Pending(event, new CompletableFuture<>());
        synchronized (progress) {
            acceptedCount++;
        }
        boolean queued = false;
        try {
            queued = queue.offer(p, ctx.config.blockMs(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!queued) {
            synchronized (progress) {
                acceptedCount--;
            }
            throw new BackPressureException("sink " + ctx.config.name() + ": " + ctx.config.bufferEvents()
                    + " events waiting for XADD (buffer.events) for " + ctx.config.blockMs() + " ms (block.ms)");
        }
        return p.done;
    }

    /**
     * The single user of the write connection. Sends each drained group of rows as pipelined XADDs with one flush
     * and does not wait for the replies before sending the next group: up to {@link #MAX_UNACKNOWLEDGED_XADDS}
     * XADDs may await their reply (a semaphore released by the reply callbacks, which complete the callers'
     * futures on Lettuce's I/O thread).
     */
    private void runWriter() {
        RedisClusterAsyncCommands<byte[], byte[]> redis = connection.async();
        List<Pending> batch = new ArrayList<>(ctx.config.batchRows());
        int max = Math.min(ctx.config.batchRows(), 4096);
        while (true) {
            try {
                Pending first = queue.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) {
                    if (unacknowledged.availablePermits() < MAX_UNACKNOWLEDGED_XADDS) {
                        // a cluster client re-sends an XADD redirected by MOVED/ASK through this connection's
                        // writer, which buffers it while auto-flush is off: flush so it does not wait for new rows
                        connection.connection().flushCommands();
                    }
                    if (closed && queue.isEmpty()) {
                        unacknowledged.acquire(MAX_UNACKNOWLEDGED_XADDS); // every reply is in
                        unacknowledged.release(MAX_UNACKNOWLEDGED_XADDS);
                        return;
                    }
                    continue;
                }
                awaitRoomInStream();
                batch.add(first);
                queue.drainTo(batch, max - 1);
                unacknowledged.acquire(batch.size());
                List<byte[]> rows = new ArrayList<>(batch.size());
                for (Pending p : batch) {
                    rows.add(p.row);
                }
                int from = 0;
                while (from < batch.size()) {
                    int to = from;
                    int bytes = 0;
                    while (to < batch.size() && to - from < EVENTS_PER_ENTRY && (to == from || bytes + rows.get(to).length <= BYTES_PER_ENTRY)) {
                        bytes += rows.get(to++).length;
                    }
                    List<Pending> entry = List.copyOf(batch.subList(from, to));
                    redis.xadd(key, StreamEntries.PACKED, StreamEntries.pack(rows, from, to))
                            .whenComplete((id, err) -> entry.forEach(p -> acknowledged(p, err)));
                    from = to;
                }
                connection.connection().flushCommands();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                for (Pending p : batch) {
                    p.done.completeExceptionally(new ClosedException("sink closed"));
                }
                return;
            } catch (RuntimeException e) {
                LOG.error("XADD writer of {} failed a batch of {}: {}", ctx.config.name(), batch.size(), e.toString());
                for (Pending p : batch) {
                    acknowledged(p, e);
                }
            } finally {
                batch.clear();
            }
        }
    }

    private void acknowledged(Pending p, Throwable err) {
        if (err == null) {
            written.incrementAndGet();
            ctx.metrics.accepted(1);
            p.done.complete(null);
        } else {
            p.done.completeExceptionally(new IngestException("Redis XADD to " + ctx.config.redisStream() + " failed: " + err,
                    -1, false, true, err));
        }
        unacknowledged.release();
        synchronized (progress) {
            doneCount++;
            if (doneCount >= acceptedCount) {
                progress.notifyAll();
            }
        }
    }

    /** Back-pressure bound: entries in the stream not yet landed by our drainers < redis.max.pending. */
    private void awaitRoomInStream() throws InterruptedException {
        synchronized (progress) {
            while (written.get() - landed.get() >= ctx.config.redisMaxPending()) {
                progress.wait(100);
            }
        }
    }

    @Override
    public void flush() {
        long target;
        synchronized (progress) {
            target = acceptedCount;
            while (doneCount < target) {
                try {
                    progress.wait(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
        // and until the drainers landed what was written (entries written by other processes are not waited for)
        long w = written.get();
        synchronized (progress) {
            while (landed.get() < w && !closedDrainers()) {
                try {
                    progress.wait(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private boolean closedDrainers() {
        return drainers.stream().noneMatch(StreamDrainer::isAlive);
    }

    @Override
    public Map<String, Number> metrics() {
        return ctx.metrics.snapshot();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            writer.join();
            long deadline = System.nanoTime() + ctx.config.closeTimeoutMs() * 1_000_000L;
            synchronized (progress) {
                while (landed.get() < written.get() && System.nanoTime() < deadline) {
                    progress.wait(100);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        ctx.giveUpAfter(0);
        drainers.forEach(StreamDrainer::stop);
        connection.close();
        endpoint.close();
        ctx.close();
    }

    @Override
    public io.sluice.ingest.Guarantee guarantee() {
        return ctx.format.provenance() == RowFormat.Provenance.ENTRIES
                ? io.sluice.ingest.Guarantee.EXACTLY_ONCE_ENTRY_COLUMNS : io.sluice.ingest.Guarantee.AT_LEAST_ONCE;
    }
}
