package io.sluice.ingest.internal;

import io.sluice.core.SluiceException.BackPressureException;
import io.sluice.core.SluiceException.ClosedException;
import io.sluice.ingest.EventSink;
import io.sluice.ingest.IngestException;
import io.sluice.ingest.IngestException.RowRejectedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Strategy coalescing: writers put encoded rows into a bounded queue ({@code buffer.events}); one batcher thread
 * (the single writer of batches) cuts batches at {@code batch.rows}, {@code batch.bytes} or {@code linger.ms}
 * and hands each to one of {@code max.in.flight} insert threads. When ClickHouse is slow or down, inserts retry
 * with backoff, the in-flight permits run out, the batcher stops taking rows, the queue fills and writers get
 * {@link BackPressureException} after {@code block.ms}: nothing accepted is dropped. A write's future completes
 * when its batch is in ClickHouse.
 */
final class CoalescingSink implements EventSink {
    private static final Logger LOG = LoggerFactory.getLogger(CoalescingSink.class);

    private record Pending(byte[] row, CompletableFuture<Void> done) {
    }

    private final SinkContext ctx;
    private final BatchInserter inserter;
    private final ArrayBlockingQueue<Pending> queue;
    private final Semaphore inFlight;
    private final ExecutorService insertThreads;
    private final Thread batcher;
    private final Object progress = new Object();
    private long accepted;   // guarded by progress
    private long completed;  // guarded by progress
    private volatile boolean closed;

    CoalescingSink(SinkContext ctx) {
        this.ctx = ctx;
        this.inserter = ctx.inserter(ctx.format, Map.of(), ctx.clickHouseDeadLetters());
        this.queue = new ArrayBlockingQueue<>(ctx.config.bufferEvents());
        this.inFlight = new Semaphore(ctx.config.maxInFlight());
        AtomicInteger n = new AtomicInteger();
        this.insertThreads = Executors.newFixedThreadPool(ctx.config.maxInFlight(), r ->
                new Thread(r, "sluice-ingest-" + ctx.config.name() + "-insert-" + n.incrementAndGet()));
        this.batcher = new Thread(this::runBatcher, "sluice-ingest-" + ctx.config.name() + "-batcher");
        this.batcher.start();
    }

    @Override
    public CompletableFuture<Void> write(byte[] event) {
        if (closed) {
            throw new ClosedException("sink " + ctx.config.name() + " is closed");
        }
        Pending p = new Pending(ctx.format.encode(event), new CompletableFuture<>());
        synchronized (progress) {
            accepted++;
        }
        try {
            if (!queue.offer(p, ctx.config.blockMs(), TimeUnit.MILLISECONDS)) {
                undoAccept();
                throw new BackPressureException("sink " + ctx.config.name() + ": " + ctx.config.bufferEvents()
                        + " events buffered (buffer.events) for " + ctx.config.blockMs() + " ms (block.ms); ClickHouse is behind");
            }
        } catch (InterruptedException e) {
            undoAccept();
            Thread.currentThread().interrupt();
            throw new BackPressureException("interrupted while waiting for room");
        }
        ctx.metrics.accepted(1);
        return p.done;
    }

    private void undoAccept() {
        synchronized (progress) {
            accepted--;
            progress.notifyAll();
        }
    }

    private void runBatcher() {
        ArrayDeque<Pending> staged = new ArrayDeque<>();
        int maxRows = ctx.config.batchRows();
        int maxBytes = ctx.config.batchBytes();
        long lingerNanos = ctx.config.lingerMs() * 1_000_000L;
        try {
            while (true) {
                if (staged.isEmpty()) {
                    Pending first = queue.poll(100, TimeUnit.MILLISECONDS);
                    if (first == null) {
                        if (closed && queue.isEmpty()) {
                            return;
                        }
                        continue;
                    }
                    staged.add(first);
                }
                RowBatch<CompletableFuture<Void>> batch = new RowBatch<>(Math.min(maxRows, 1024), Math.min(maxBytes, 1 << 16));
                long deadline = System.nanoTime() + lingerNanos;
                while (batch.rows() < maxRows) {
                    if (staged.isEmpty() && queue.drainTo(staged, Math.min(4096, maxRows - batch.rows())) == 0) {
                        long wait = deadline - System.nanoTime();
                        Pending next = wait > 0 && !closed ? queue.poll(wait, TimeUnit.NANOSECONDS) : null;
                        if (next == null) {
                            break;
                        }
                        staged.add(next);
                    }
                    Pending p = staged.peek();
                    if (!batch.isEmpty() && batch.bytes() + p.row.length + 1 > maxBytes) {
                        break;
                    }
                    staged.poll();
                    ctx.format.append(batch, p.row, p.done);
                }
                inFlight.acquire();
                insertThreads.execute(() -> land(batch));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            LOG.error("batcher of {} interrupted; {} buffered events fail", ctx.config.name(), queue.size() + staged.size());
            failAll(staged, new ClosedException("sink " + ctx.config.name() + " interrupted"));
        }
    }

    private void land(RowBatch<CompletableFuture<Void>> batch) {
        try {
            List<BatchInserter.Rejected<CompletableFuture<Void>>> rejected = inserter.insert(batch, null, f -> "coalescing");
            for (BatchInserter.Rejected<CompletableFuture<Void>> r : rejected) {
                r.tag().completeExceptionally(new RowRejectedException(r.error()));
            }
            for (CompletableFuture<Void> f : batch.tags()) {
                f.complete(null);
            }
        } catch (RuntimeException e) {
            IngestException failure = e instanceof IngestException ie ? ie
                    : new IngestException("insert failed: " + e, -1, false, true, e);
            LOG.error("sink {} gave up on a batch of {} rows at close: {}", ctx.config.name(), batch.rows(), e.toString());
            for (CompletableFuture<Void> f : batch.tags()) {
                f.completeExceptionally(failure);
            }
        } finally {
            inFlight.release();
            synchronized (progress) {
                completed += batch.rows();
                progress.notifyAll();
            }
        }
    }

    private void failAll(ArrayDeque<Pending> staged, RuntimeException e) {
        Pending p;
        while ((p = staged.poll()) != null || (p = queue.poll()) != null) {
            p.done.completeExceptionally(e);
            synchronized (progress) {
                completed++;
            }
        }
    }

    @Override
    public void flush() {
        synchronized (progress) {
            long target = accepted;
            while (completed < target) {
                try {
                    progress.wait(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
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
        try {
            batcher.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // a write that raced with close may have queued after the batcher left
        failAll(new ArrayDeque<>(), new ClosedException("sink " + ctx.config.name() + " closed"));
        flush();
        insertThreads.shutdown();
        ctx.close();
    }
}
