package io.sluice.ingest.internal;

import io.sluice.redis.DeadLetterStream;
import io.sluice.redis.RedisEndpoint;
import io.sluice.redis.RedisStreamException;
import io.sluice.redis.StreamWriter;

import io.sluice.core.SluiceException.BackPressureException;
import io.sluice.core.SluiceException.ClosedException;
import io.sluice.ingest.EventSink;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.IngestException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Strategies redis-stream (one drainer) and worker-pool (N drainers, takeover, dead letters), storing through
 * redis-transport: its {@link StreamWriter}, {@link io.sluice.redis.GroupReader} and {@link DeadLetterStream}, on one
 * {@link RedisEndpoint} (a server or a cluster). The write path ends at a pipelined XADD: writers put rows into a
 * bounded queue; one writer thread (the {@link StreamWriter}'s single writer) drains up to 4096 events, has them
 * packed into entries of up to {@link StreamWriter#EVENTS_PER_ENTRY} events, sends the XADDs with one flush and
 * completes each caller's future when Redis acknowledged the entry holding its event. Each worker is the one
 * {@link IngestEngine} over a member of the stream's consumer group ({@link StreamGroupConsumer}, named
 * {@code <name>-<pid>-<worker>}) landing batches of entries ({@link EntryBatches}): batch → INSERT → XACK in order,
 * supervised, takeover of idle entries, dead letters — entries are acknowledged only after they landed.
 *
 * <p><b>Trimming never removes an entry not yet in ClickHouse</b>: there is no MAXLEN trimming at all (MAXLEN ~
 * would drop pending entries). Drainers remove only acknowledged entries — {@code XTRIM MINID} below every group's
 * floor on Redis 6.2+ (redis-transport's {@code StreamGroups.floor}, the rule its producer's trimming uses), XDEL
 * after XACK on older servers — so the stream holds
 * the entries not yet landed, and it is bounded on the write path instead: when the events this sink wrote or is
 * writing (XADDs sent, reply not yet in) minus those its drainers landed reach {@code redis.max.pending}, the writer
 * thread stops sending, the queue fills and writers get {@link BackPressureException} after {@code block.ms}. So
 * the stream holds fewer than {@code redis.max.pending} of this sink's events plus one group of XADDs (up to 4096).
 * Closing gives the drainers until {@code close.timeout.ms} to make room; the events still waiting then fail with
 * a {@link ClosedException} that names the bound.
 *
 * <p>Redis down: XADD fails at once (disconnected commands are rejected, not buffered), the caller's future fails
 * with an {@link IngestException} — the event was not accepted; Lettuce reconnects in the background.
 */
final class RedisStreamSink implements EventSink {
    private static final Logger LOG = LoggerFactory.getLogger(RedisStreamSink.class);

    private record Pending(byte[] row, CompletableFuture<Void> done) {
    }

    private final SinkContext ctx;
    private final RedisEndpoint endpoint;
    private final StreamWriter stream;
    private final DeadLetterStream deadLetterStream;
    private final ArrayBlockingQueue<Pending> queue;
    private final Thread writer;
    private final List<IngestEngine<EntryBatches.Entries>> workers = new ArrayList<>();
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
        this.stream = new StreamWriter(endpoint, ctx.config.redisStream());
        this.queue = new ArrayBlockingQueue<>(ctx.config.bufferEvents());
        this.deadLetterStream = new DeadLetterStream(endpoint, ctx.config.redisStream() + ":dead-letters");
        DeadLetters deadLetters = this::deadLetter;
        BatchInserter inserter = ctx.inserter(ctx.format, Map.of(), deadLetters);
        this.writer = new Thread(this::runWriter, "sluice-ingest-" + ctx.config.name() + "-xadd");
        this.writer.start();
        for (int i = 0; i < workers; i++) {
            this.workers.add(worker(i, inserter, deadLetters, takeover));
        }
    }

    /**
     * Worker {@code index}: the engine over one member of the group. The member's name is unique per process run: after
     * a crash the new process takes the old name's entries over (XAUTOCLAIM), while a restart of the engine's loop
     * re-reads its own. It polls at least every {@code redis.claim.idle.ms / 4}, so its keep-alive runs in time.
     */
    private IngestEngine<EntryBatches.Entries> worker(int index, BatchInserter inserter, DeadLetters deadLetters, boolean takeover) {
        IngestConfig c = ctx.config;
        String stream = c.redisStream();
        String member = c.name() + "-" + ProcessHandle.current().pid() + "-" + index;
        EntryLedger ledger = new EntryLedger(stream);
        StreamGroupConsumer.Settings settings = new StreamGroupConsumer.Settings(c.batchRows(), c.redisClaimIdleMs(),
                c.redisMaxDeliveries(), takeover, c.retryInitialMs(), c.retryMaxMs());
        return new IngestEngine<>(c, "sluice-ingest-" + c.name() + "-drainer-" + index,
                new EntryBatches(ctx, stream, ledger, inserter, deadLetters),
                cc -> new StreamGroupConsumer(endpoint, stream, c.redisGroup(), member, ledger, settings, deadLetterStream,
                        ctx.metrics::deadLettered, this::landed, ctx::givingUp),
                Supervision.MissingTopic.FAIL, Math.max(1, c.redisClaimIdleMs() / 4));
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
        List<Pending> batch = new ArrayList<>(ctx.config.batchRows());
        int max = Math.min(ctx.config.batchRows(), 4096);
        while (true) {
            try {
                Pending first = queue.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) {
                    if (unacknowledged.availablePermits() < MAX_UNACKNOWLEDGED_XADDS) {
                        // a cluster client re-sends an XADD redirected by MOVED/ASK through the writer's
                        // connection, which holds it until flushed: flush so it does not wait for new rows
                        stream.flush();
                    }
                    if (closed && queue.isEmpty()) {
                        unacknowledged.acquire(MAX_UNACKNOWLEDGED_XADDS); // every reply is in
                        unacknowledged.release(MAX_UNACKNOWLEDGED_XADDS);
                        return;
                    }
                    continue;
                }
                batch.add(first);
                queue.drainTo(batch, max - 1);
                unacknowledged.acquire(batch.size());
                if (!awaitRoomInStream(batch.size())) {
                    // the drainers did not make room before close's deadline: these rows are refused, not written
                    ClosedException refused = new ClosedException("sink " + ctx.config.name() + " closed before its drainers "
                            + "made room in the stream: redis.max.pending (" + ctx.config.redisMaxPending()
                            + ") events written and not yet landed; this event was not written");
                    for (Pending p : batch) {
                        acknowledged(p, refused);
                    }
                    continue;
                }
                List<byte[]> rows = new ArrayList<>(batch.size());
                for (Pending p : batch) {
                    rows.add(p.row);
                }
                List<Pending> sent = List.copyOf(batch);
                stream.append(rows, (from, to, err) -> {
                    for (int i = from; i < to; i++) {
                        acknowledged(sent.get(i), err);
                    }
                });
                stream.flush();
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
        } else if (err instanceof ClosedException) {
            p.done.completeExceptionally(err); // refused at close, never sent
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

    /**
     * The strategies' {@link DeadLetters}: the stream {@code <stream>:dead-letters} (one entry per event: payload,
     * error, source), retried with backoff until Redis takes the letters or the sink gives up.
     */
    private void deadLetter(List<DeadLetters.Letter> letters) {
        List<DeadLetterStream.Letter> out = new ArrayList<>(letters.size());
        for (DeadLetters.Letter l : letters) {
            out.add(new DeadLetterStream.Letter(l.payload(), l.error(), l.source()));
        }
        Backoff backoff = new Backoff(ctx.config.retryInitialMs(), ctx.config.retryMaxMs());
        while (true) {
            try {
                deadLetterStream.append(out);
                LOG.warn("{} entr(ies) dead-lettered to {}; first error: {}", letters.size(), deadLetterStream.key(),
                        letters.get(0).error());
                return;
            } catch (RedisStreamException e) {
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

    /**
     * Back-pressure bound: waits until the events written or being written (before this group of {@code sending},
     * whose permits are taken) and not yet landed by our drainers are fewer than redis.max.pending; false when
     * close's deadline passed first. A reply moves an event from in flight to written (written is counted before
     * the permit is released), so the sum never undercounts.
     */
    private boolean awaitRoomInStream(int sending) throws InterruptedException {
        synchronized (progress) {
            while (written.get() + (MAX_UNACKNOWLEDGED_XADDS - unacknowledged.availablePermits() - sending) - landed.get()
                    >= ctx.config.redisMaxPending()) {
                if (closed && ctx.givingUp()) {
                    return false;
                }
                progress.wait(100);
            }
        }
        return true;
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
        return workers.stream().noneMatch(w -> w.supervision().state() != io.sluice.ingest.PipelineState.CLOSED
                && w.supervision().state() != io.sluice.ingest.PipelineState.FAILED);
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
        // one budget for the whole close (close.timeout.ms): the writer's last XADDs, the drainers landing what was
        // written, then their own close (what they still hold, its XACK, and the trim of the tail those XACKs left)
        ctx.giveUpAfter(ctx.config.closeTimeoutMs());
        try {
            writer.join();
            synchronized (progress) {
                while (landed.get() < written.get() && !ctx.givingUp()) {
                    progress.wait(100);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        workers.forEach(IngestEngine::close);
        stream.close();
        deadLetterStream.close();
        endpoint.close();
        ctx.close();
    }

    @Override
    public io.sluice.ingest.Guarantee guarantee() {
        return ctx.format.provenance() == RowFormat.Provenance.ENTRIES
                ? io.sluice.ingest.Guarantee.EXACTLY_ONCE_ENTRY_COLUMNS : io.sluice.ingest.Guarantee.AT_LEAST_ONCE;
    }
}
