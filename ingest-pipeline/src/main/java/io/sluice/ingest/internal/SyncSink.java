package io.sluice.ingest.internal;

import io.sluice.core.SluiceException.ClosedException;
import io.sluice.ingest.EventSink;
import io.sluice.ingest.IngestException.RowRejectedException;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/** Strategy sync: one INSERT per event in the caller's thread; returns when ClickHouse answered. The baseline. */
final class SyncSink implements EventSink {
    private final SinkContext ctx;
    private final BatchInserter inserter;
    private volatile boolean closed;

    SyncSink(SinkContext ctx) {
        this.ctx = ctx;
        this.inserter = ctx.inserter(ctx.format, Map.of(), ctx.clickHouseDeadLetters());
    }

    @Override
    public CompletableFuture<Void> write(byte[] event) {
        if (closed) {
            throw new ClosedException("sink " + ctx.config.name() + " is closed");
        }
        byte[] row = ctx.format.encode(event);
        RowBatch<Void> batch = new RowBatch<>(1, row.length + 1);
        ctx.format.append(batch, row, null);
        ctx.metrics.accepted(1);
        List<BatchInserter.Rejected<Void>> rejected = inserter.insert(batch, null, t -> "sync");
        return rejected.isEmpty() ? CompletableFuture.completedFuture(null)
                : CompletableFuture.failedFuture(new RowRejectedException(rejected.get(0).error()));
    }

    @Override
    public void flush() {
        // every write already waited for its INSERT
    }

    @Override
    public Map<String, Number> metrics() {
        return ctx.metrics.snapshot();
    }

    @Override
    public void close() {
        closed = true;
        ctx.giveUpAfter(ctx.config.closeTimeoutMs());
        ctx.close();
    }
}
