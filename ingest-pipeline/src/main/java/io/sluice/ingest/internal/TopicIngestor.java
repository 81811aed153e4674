package io.sluice.ingest.internal;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.SluiceException.BackPressureException;
import io.sluice.core.TopicPartition;
import io.sluice.ingest.ConsumerFactory;
import io.sluice.ingest.EventSink;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.IngestException.RowRejectedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Feeds an {@link EventSink} (sync, async, coalescing, redis-stream, worker-pool) from a Sluice topic: one
 * thread polls a group consumer, writes each event to the sink, and commits a poll's offsets once every write of
 * it (and of the polls before it) completed — so the topic offset never moves past an event the sink has not
 * taken responsibility for (in ClickHouse for coalescing/sync, in Redis for the stream strategies). Sink
 * back-pressure stops the polling. Events the sink refuses as malformed go to the dead letters.
 */
public final class TopicIngestor implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TopicIngestor.class);

    private record PollWrites(Map<TopicPartition, Long> next, CompletableFuture<Void> done) {
    }

    private final IngestConfig config;
    private final EventSink sink;
    private final ConsumerFactory consumers;
    private final Thread thread;
    private volatile boolean running = true;
    private final Supervision supervision = new Supervision();

    public TopicIngestor(IngestConfig config, EventSink sink, ConsumerFactory consumers) {
        this.config = config;
        this.sink = sink;
        this.consumers = consumers;
        this.thread = new Thread(this::run, "sluice-ingest-" + config.name() + "-topic");
        this.thread.start();
    }

    /**
     * Supervised: a failed write or a consumer error starts the loop again from the committed offsets after a
     * backoff (never committing past an event that was not landed); a configuration error stops it.
     */
    private void run() {
        Backoff backoff = new Backoff(config.retryInitialMs(), config.retryMaxMs());
        while (running) {
            try {
                supervision.running();
                consume();
                break;
            } catch (Throwable t) {
                if (Supervision.isConfigError(t) || t instanceof Error) {
                    supervision.failed(t);
                    LOG.error("topic ingestor {} stopped: {}", config.name(), t.toString(), t);
                    break;
                }
                if (!running) {
                    break;
                }
                supervision.retrying(t.getMessage() != null ? t.getMessage() : t.toString());
                supervision.restarted();
                LOG.warn("topic ingestor {}: {}; starting again from the committed offsets after a backoff", config.name(), t.toString());
                try {
                    backoff.pause(() -> !running);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        supervision.closed();
    }

    private void consume() {
        ConsumerConfig cc = ConsumerConfig.builder().groupId(config.group()).clientId("sluice-ingest-" + config.name())
                .offsetReset(OffsetReset.EARLIEST).maxPollRecords(Math.min(100_000, Math.max(500, config.batchRows())))
                .build();
        ArrayDeque<PollWrites> pending = new ArrayDeque<>();
        try (Consumer consumer = consumers.open(cc)) {
            consumer.subscribe(config.topic());
            while (running) {
                commitCompleted(consumer, pending);
                List<ConsumerRecord> records = consumer.poll(Duration.ofMillis(100));
                if (records.isEmpty()) {
                    continue;
                }
                List<CompletableFuture<Void>> writes = new ArrayList<>(records.size());
                Map<TopicPartition, Long> next = new HashMap<>();
                for (ConsumerRecord r : records) {
                    CompletableFuture<Void> f = writeWithBackPressure(r, consumer, pending);
                    if (f == null) {
                        return; // closing while back-pressured: the rest is re-read after restart
                    }
                    writes.add(f.exceptionallyCompose(e -> {
                        Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                        return c instanceof RowRejectedException ? CompletableFuture.completedFuture(null) : CompletableFuture.failedFuture(c);
                    }));
                    next.put(r.topicPartition(), r.offset() + 1);
                }
                pending.add(new PollWrites(next, CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new))));
            }
            sink.flush();
            commitCompleted(consumer, pending);
        }
    }

    private CompletableFuture<Void> writeWithBackPressure(ConsumerRecord r, Consumer consumer, ArrayDeque<PollWrites> pending) {
        while (running) {
            try {
                return sink.write(r.value());
            } catch (BackPressureException e) {
                commitCompleted(consumer, pending); // keep committing what landed while we wait
            } catch (IllegalArgumentException e) {
                LOG.warn("event {}/{}/{} is not ingestible and is skipped: {}", r.topic(), r.partition(), r.offset(), e.getMessage());
                return CompletableFuture.completedFuture(null);
            }
        }
        return null;
    }

    private static void commitCompleted(Consumer consumer, ArrayDeque<PollWrites> pending) {
        Map<TopicPartition, Long> commits = new HashMap<>();
        while (!pending.isEmpty() && pending.peek().done.isDone()) {
            PollWrites w = pending.poll();
            if (w.done.isCompletedExceptionally()) {
                // never commit past it: the loop starts again from the committed offsets
                if (!commits.isEmpty()) {
                    consumer.commitSync(commits);
                }
                throw new IllegalStateException("writes of a poll failed; re-reading from the committed offsets: "
                        + w.done.handle((v, e) -> String.valueOf(e)).join());
            }
            commits.putAll(w.next);
        }
        if (!commits.isEmpty()) {
            try {
                consumer.commitSync(commits);
            } catch (io.sluice.core.SluiceException.GroupException e) {
                // a newer generation owns these partitions: their new owner re-reads from the last accepted commit
                LOG.info("commit of {} refused: {}", commits.keySet(), e.getMessage());
            }
        }
    }

    public Supervision supervision() {
        return supervision;
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        supervision.closed();
    }
}
