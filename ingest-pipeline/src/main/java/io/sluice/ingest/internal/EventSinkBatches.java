package io.sluice.ingest.internal;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.SluiceException.BackPressureException;
import io.sluice.core.TopicPartition;
import io.sluice.ingest.EventSink;
import io.sluice.ingest.Guarantee;
import io.sluice.ingest.IngestException.RowRejectedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * The sync, async, coalescing, redis-stream and worker-pool strategies as a {@link BatchSink}: each record is
 * written to the {@link EventSink} as it is read (on the engine's poller thread, so the sink sees the topic's
 * order), and a batch has landed when every write of it completed — in ClickHouse for sync and coalescing, in
 * Redis for the stream strategies, at the server's async queue for async. So the engine commits a topic offset
 * only once the sink took responsibility for every event up to it.
 *
 * <p>A sink's back-pressure ({@link BackPressureException} after {@code block.ms}) refuses the record: the engine
 * reads it again later. An event the sink refuses as malformed is skipped with a warning (nothing was accepted);
 * a row ClickHouse rejects was dead-lettered by the sink and counts as landed.
 */
final class EventSinkBatches implements BatchSink<EventSinkBatches.Writes> {
    private static final Logger LOG = LoggerFactory.getLogger(EventSinkBatches.class);

    /** The writes of one batch, awaiting completion. */
    static final class Writes {
        final List<CompletableFuture<Void>> futures;
        int bytes;

        Writes(int rowsHint) {
            this.futures = new ArrayList<>(Math.min(rowsHint, 4096));
        }
    }

    private final EventSink sink;

    EventSinkBatches(EventSink sink) {
        this.sink = sink;
    }

    @Override
    public void open() {
        // the sink was opened (and its table checked) when it was built
    }

    @Override
    public Guarantee guarantee() {
        return sink.guarantee();
    }

    @Override
    public Map<String, Number> metrics() {
        return sink.metrics();
    }

    @Override
    public String lastFailure() {
        return null; // a failed write fails its batch: the engine restarts and reports it
    }

    @Override
    public Writes newBatch(int rowsHint, int bytesHint) {
        return new Writes(rowsHint);
    }

    @Override
    public int bytes(Writes batch) {
        return batch.bytes;
    }

    @Override
    public int rows(Writes batch) {
        return batch.futures.size();
    }

    @Override
    public boolean add(Writes batch, ConsumerRecord r) {
        try {
            batch.futures.add(sink.write(r.value()));
            batch.bytes += r.value().length;
        } catch (BackPressureException e) {
            return false;
        } catch (IllegalArgumentException e) {
            LOG.warn("event {}/{}/{} is not ingestible and is skipped: {}", r.topic(), r.partition(), r.offset(), e.getMessage());
        }
        return true;
    }

    /** Waits for every write of the batch; a row the sink dead-lettered ({@link RowRejectedException}) counts as landed. */
    @Override
    public void insert(TopicPartition partition, long from, long to, Writes batch, BooleanSupplier abandoned) throws Exception {
        for (CompletableFuture<Void> f : batch.futures) {
            while (true) {
                try {
                    f.get(100, TimeUnit.MILLISECONDS);
                    break;
                } catch (TimeoutException e) {
                    if (abandoned.getAsBoolean()) {
                        throw new IllegalStateException("batch abandoned before its writes completed");
                    }
                } catch (ExecutionException | CompletionException e) {
                    Throwable c = e.getCause() != null ? e.getCause() : e;
                    if (!(c instanceof RowRejectedException)) {
                        throw c instanceof Exception ex ? ex : new IllegalStateException(c);
                    }
                    break;
                }
            }
        }
    }

    @Override
    public void close() {
        sink.close();
    }
}
