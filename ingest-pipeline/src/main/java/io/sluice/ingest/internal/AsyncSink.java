package io.sluice.ingest.internal;

import io.sluice.core.SluiceException.BackPressureException;
import io.sluice.core.SluiceException.ClosedException;
import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.ingest.EventSink;
import io.sluice.ingest.IngestException;
import io.sluice.ingest.IngestException.RowRejectedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Strategy async: one INSERT per event, not waiting for the data to be written. On servers with
 * {@code async_insert} (21.11+) the INSERT goes to the target with {@code async_insert=1,
 * wait_for_async_insert=0}; on older servers (the 18.16 test server) it goes to a {@code Buffer} table in front of
 * the target ({@code <table>_sluice_buffer}, created and checked here), which the server flushes to the target
 * after 1–2 s. Up to {@code max.in.flight} INSERTs are in flight; a write beyond that waits (back-pressure).
 * Guarantee: at-most-once once acknowledged — a server crash loses what sits in its async queue / Buffer.
 */
final class AsyncSink implements EventSink {
    private static final Logger LOG = LoggerFactory.getLogger(AsyncSink.class);

    private final SinkContext ctx;
    private final RowFormat format;
    private final Map<String, String> settings;
    private final BatchInserter retrier;
    private final Semaphore inFlight;
    private final ExecutorService retries;
    private volatile boolean closed;

    AsyncSink(SinkContext ctx) {
        this.ctx = ctx;
        if (ctx.target.supportsSetting("async_insert") && ctx.target.supportsSetting("wait_for_async_insert")) {
            this.format = ctx.format;
            this.settings = Map.of("async_insert", "1", "wait_for_async_insert", "0");
        } else {
            String buffer = ensureBufferTable(ctx);
            this.format = new RowFormat(buffer, ctx.config.rowEncoder(), RowFormat.Provenance.NONE);
            this.settings = Map.of();
        }
        this.retrier = ctx.inserter(format, settings, ctx.clickHouseDeadLetters());
        this.inFlight = new Semaphore(ctx.config.maxInFlight());
        AtomicInteger n = new AtomicInteger();
        this.retries = Executors.newFixedThreadPool(Math.max(1, Math.min(4, ctx.config.maxInFlight())), r -> {
            Thread t = new Thread(r, "sluice-ingest-" + ctx.config.name() + "-async-retry-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** Creates {@code <table>_sluice_buffer} (Buffer engine over the target) or checks the existing one. */
    static String ensureBufferTable(SinkContext ctx) {
        String db = ctx.config.database();
        String name = ctx.config.tableName() + "_sluice_buffer";
        ctx.http.query("CREATE TABLE IF NOT EXISTS " + db + "." + name + " AS " + ctx.config.table()
                + " ENGINE = Buffer(" + db + ", " + ctx.config.tableName() + ", 4, 1, 2, 10000, 1000000, 10000000, 100000000)");
        String engine = ctx.http.query("SELECT engine_full FROM system.tables WHERE database = '" + db + "' AND name = '"
                + name + "' FORMAT TabSeparated").strip();
        if (!engine.replace(" ", "").startsWith("Buffer(" + db + "," + ctx.config.tableName() + ",")) {
            throw InvalidConfigException.of("table", ctx.config.table(), "has a table " + db + "." + name
                    + " that is not a Buffer in front of it (engine " + engine + "): drop or rename it");
        }
        LOG.info("async strategy: server {} has no async_insert; inserting into Buffer table {}.{}", ctx.target.version(), db, name);
        return db + "." + name;
    }

    @Override
    public CompletableFuture<Void> write(byte[] event) {
        if (closed) {
            throw new ClosedException("sink " + ctx.config.name() + " is closed");
        }
        byte[] row = format.encode(event);
        RowBatch<Void> batch = new RowBatch<>(1, row.length + 1);
        format.append(batch, row, null);
        try {
            if (!inFlight.tryAcquire(ctx.config.blockMs(), TimeUnit.MILLISECONDS)) {
                throw new BackPressureException("sink " + ctx.config.name() + ": " + ctx.config.maxInFlight()
                        + " async inserts in flight (max.in.flight) for " + ctx.config.blockMs() + " ms (block.ms)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackPressureException("interrupted while waiting for room");
        }
        ctx.metrics.accepted(1);
        long start = System.nanoTime();
        CompletableFuture<Void> result = new CompletableFuture<>();
        ctx.http.insertAsync(format.insertSql(), settings, batch.array(), 0, batch.bytes()).whenComplete((ok, err) -> {
            if (err == null) {
                ctx.metrics.inserted(1, System.nanoTime() - start);
                inFlight.release();
                result.complete(null);
                return;
            }
            // failed: the retrier (backoff, dead letters) takes over on its own thread; the permit stays taken
            retries.execute(() -> {
                try {
                    ctx.metrics.retried();
                    List<BatchInserter.Rejected<Void>> rejected = retrier.insert(batch, null, t -> "async");
                    if (rejected.isEmpty()) {
                        result.complete(null);
                    } else {
                        result.completeExceptionally(new RowRejectedException(rejected.get(0).error()));
                    }
                } catch (IngestException e) {
                    result.completeExceptionally(e);
                } finally {
                    inFlight.release();
                }
            });
        });
        return result;
    }

    @Override
    public void flush() {
        int permits = ctx.config.maxInFlight();
        inFlight.acquireUninterruptibly(permits);
        inFlight.release(permits);
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
        ctx.giveUpAfter(ctx.config.closeTimeoutMs());
        flush();
        retries.shutdown();
        ctx.close();
    }

    @Override
    public io.sluice.ingest.Guarantee guarantee() {
        return io.sluice.ingest.Guarantee.AT_MOST_ONCE;
    }
}
