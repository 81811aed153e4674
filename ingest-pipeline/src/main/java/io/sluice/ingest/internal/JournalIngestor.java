package io.sluice.ingest.internal;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.TopicPartition;
import io.sluice.ingest.ConsumerFactory;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.IngestException;
import io.sluice.ingest.IngestMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Strategy journal: a member of a Sluice consumer group on the topic. One thread owns the {@link Consumer}
 * (not thread-safe) and all partition state; up to {@code max.in.flight} batches are inserted in parallel by
 * insert threads, which report back through a queue. A partition's committed offset only moves over batches
 * ClickHouse accepted, in offset order.
 *
 * <p>Batches are offset ranges of one partition, cut at multiples of {@code batch.rows} (so a full batch is the
 * same range after a restart) or earlier by {@code batch.bytes} / {@code linger.ms}.
 *
 * <p><b>Guarantee.</b> No loss: an offset is committed only after its row is in ClickHouse (or dead-lettered).
 * Duplicates:
 * <ul>
 *   <li>table with {@code _sluice_partition UInt32} and {@code _sluice_offset UInt64} columns (recommended;
 *       filled by Sluice): exactly-once rows. When a partition is (re)assigned — after a crash, restart or
 *       rebalance — Sluice reads which offsets at or after the committed offset are already in the table and skips
 *       them; after an INSERT whose outcome is unknown (timeout, connection lost) it does the same for the batch
 *       before retrying. Residual risk: an INSERT still executing on the server when that check runs (e.g. a
 *       zombie member) — a {@code ReplacingMergeTree ORDER BY (_sluice_partition, _sluice_offset)} removes even
 *       those at merge time;</li>
 *   <li>otherwise, on servers with {@code insert_deduplication_token} (22.2+) and a table that deduplicates
 *       inserts (Replicated*, or MergeTree with {@code non_replicated_deduplication_window}): full batches
 *       retried with the same range are dropped by the server;</li>
 *   <li>otherwise at-least-once: batches in flight at a crash may be inserted twice.</li>
 * </ul>
 */
public final class JournalIngestor implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(JournalIngestor.class);

    private static final class InFlight {
        final TopicPartition partition;
        final long from;
        final long to; // exclusive next-offset
        volatile boolean failed;

        InFlight(TopicPartition partition, long from, long to) {
            this.partition = partition;
            this.from = from;
            this.to = to;
        }
    }

    private final class PartitionState {
        final TopicPartition partition;
        RowBatch<Long> open;
        long openFrom = -1;
        long openTo = -1;
        final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();
        final ArrayDeque<InFlight> done = new ArrayDeque<>();
        Set<Long> landed = Set.of();

        PartitionState(TopicPartition partition) {
            this.partition = partition;
        }
    }

    private final IngestConfig config;
    private final SinkContext ctx;
    private final BatchInserter inserter;
    private final boolean offsetColumns;
    private final boolean dedupToken;
    private final ConsumerFactory consumers;
    private final ExecutorService insertThreads;
    private final LinkedBlockingQueue<InFlight> completions = new LinkedBlockingQueue<>();
    private final Map<TopicPartition, PartitionState> partitions = new HashMap<>();
    private final Thread thread;
    private int inFlightCount; // poller thread only
    private volatile boolean running = true;
    private volatile Throwable failure;

    public JournalIngestor(IngestConfig config, ConsumerFactory consumers) {
        this.config = config;
        this.ctx = new SinkContext(config, RowFormat.Provenance.OFFSETS);
        this.offsetColumns = ctx.target.hasOffsetColumns();
        this.dedupToken = !offsetColumns && ctx.target.supportsSetting("insert_deduplication_token");
        this.inserter = ctx.inserter(ctx.format, Map.of(), ctx.clickHouseDeadLetters());
        if (offsetColumns) {
            LOG.info("journal {}: table {} has offset columns: exactly-once rows", config.name(), config.table());
        } else if (dedupToken) {
            LOG.info("journal {}: server dedups retried batches by insert_deduplication_token (table must dedup inserts)", config.name());
        } else {
            LOG.warn("journal {}: table {} has no {}/{} columns and server {} has no insert_deduplication_token:"
                            + " at-least-once (a crash may insert in-flight batches twice)", config.name(), config.table(),
                    ClickHouseTarget.PARTITION_COLUMN, ClickHouseTarget.OFFSET_COLUMN, ctx.target.version());
        }
        this.consumers = consumers;
        AtomicInteger n = new AtomicInteger();
        this.insertThreads = Executors.newFixedThreadPool(config.maxInFlight(), r ->
                new Thread(r, "sluice-ingest-" + config.name() + "-insert-" + n.incrementAndGet()));
        this.thread = new Thread(this::run, "sluice-ingest-" + config.name() + "-journal");
        this.thread.start();
    }

    public IngestMetrics metrics() {
        return ctx.metrics;
    }

    /** Set when the pipeline stopped on an unexpected error. */
    public Throwable failure() {
        return failure;
    }

    private void run() {
        ConsumerConfig cc = ConsumerConfig.builder().groupId(config.group()).clientId("sluice-ingest-" + config.name())
                .offsetReset(OffsetReset.EARLIEST).maxPollRecords(Math.min(100_000, Math.max(500, config.batchRows())))
                .build();
        try (Consumer consumer = consumers.open(cc)) {
            consumer.subscribe(config.topic());
            long lingerNanos = config.lingerMs() * 1_000_000L;
            long heartbeatNanos = cc.sessionTimeoutMillis() * 1_000_000L / 4;
            long lastPollNanos = System.nanoTime();
            while (running) {
                if (inFlightCount >= config.maxInFlight()) {
                    // At capacity: wait for an insert to finish rather than polling records we could not take
                    // (they would be sought back and read again). Still poll at least every heartbeatNanos so the
                    // group keeps this member; meanwhile new events simply wait in the journal.
                    InFlight f = completions.poll(100, TimeUnit.MILLISECONDS);
                    if (f != null) {
                        completions.add(f);
                    } else if (System.nanoTime() - lastPollNanos < heartbeatNanos) {
                        continue;
                    }
                }
                commitCompleted(consumer);
                List<ConsumerRecord> records = consumer.poll(Duration.ofMillis(Math.max(1, Math.min(100, config.lingerMs()))));
                lastPollNanos = System.nanoTime();
                syncAssignment(consumer);
                Set<TopicPartition> blocked = new HashSet<>();
                for (ConsumerRecord r : records) {
                    TopicPartition tp = r.topicPartition();
                    PartitionState ps = partitions.get(tp);
                    if (ps == null || blocked.contains(tp)) {
                        continue;
                    }
                    if (ps.open != null && r.offset() != ps.openTo) {
                        // a gap (seek/rebalance): never let one batch span non-contiguous offsets
                        if (!seal(ps)) {
                            blocked.add(tp);
                            consumer.seek(tp, r.offset());
                            continue;
                        }
                    }
                    if (!take(ps, r)) {
                        blocked.add(tp);
                        consumer.seek(tp, r.offset());
                    }
                }
                for (PartitionState ps : partitions.values()) {
                    if (ps.open != null && ps.openTo > ps.openFrom && ps.open.ageNanos() >= lingerNanos) {
                        seal(ps);
                    }
                }
            }
            drain(consumer);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Throwable t) {
            failure = t;
            LOG.error("journal ingestor {} stopped", config.name(), t);
        }
    }

    /** Adds a record to its partition's open batch; false when that batch is full and cannot be sealed yet. */
    private boolean take(PartitionState ps, ConsumerRecord r) {
        if (ps.open != null && isFull(ps) && !seal(ps)) {
            return false;
        }
        if (ps.open == null) {
            ps.open = new RowBatch<>(Math.min(config.batchRows(), 4096), 1 << 16);
            ps.openFrom = r.offset();
            ps.openTo = r.offset();
        }
        ctx.metrics.accepted(1);
        if (ps.landed.contains(r.offset())) {
            ctx.metrics.duplicatesSkipped(1);
        } else {
            try {
                byte[] row = inserter.format().encode(r.value());
                inserter.format().append(ps.open, row, r.partition(), r.offset(), r.offset());
            } catch (IllegalArgumentException e) {
                ctx.clickHouseDeadLetters().write(List.of(new DeadLetters.Letter(r.value(), e.getMessage(), source(ps.partition, r.offset()))));
                ctx.metrics.deadLettered(1);
            }
        }
        ps.openTo = r.offset() + 1;
        if (isFull(ps)) {
            seal(ps); // at capacity it stays open and full: the partition's next record is refused and re-read later
        }
        return true;
    }

    /** Full at batch.rows offsets, batch.bytes, or an offset that is a multiple of batch.rows (aligned ranges). */
    private boolean isFull(PartitionState ps) {
        long n = ps.openTo - ps.openFrom;
        return n > 0 && (n >= config.batchRows() || ps.open.bytes() >= config.batchBytes() || ps.openTo % config.batchRows() == 0);
    }

    /** Hands the open batch to an insert thread; false when max.in.flight batches are already in flight. */
    private boolean seal(PartitionState ps) {
        if (ps.open == null || ps.openTo <= ps.openFrom) {
            return true;
        }
        if (inFlightCount >= config.maxInFlight()) {
            return false;
        }
        RowBatch<Long> batch = ps.open;
        InFlight f = new InFlight(ps.partition, ps.openFrom, ps.openTo);
        ps.open = null;
        ps.inFlight.add(f);
        inFlightCount++;
        insertThreads.execute(() -> insert(f, batch));
        return true;
    }

    private void insert(InFlight f, RowBatch<Long> batch) {
        try {
            boolean aligned = f.to - f.from == config.batchRows() && f.from % config.batchRows() == 0;
            Map<String, String> settings = dedupToken && aligned
                    ? Map.of("insert_deduplication_token", source(f.partition, f.from) + "-" + f.to) : Map.of();
            inserter.insert(batch, offsetColumns ? (b, e) -> removeLanded(f.partition, b, e) : null,
                    offset -> source(f.partition, offset), settings);
        } catch (RuntimeException e) {
            f.failed = true;
            LOG.error("journal {}: batch {}[{}, {}) not inserted: {}", config.name(), f.partition, f.from, f.to, e.toString());
        } finally {
            completions.add(f);
        }
    }

    private static String source(TopicPartition tp, long offset) {
        return tp.topic() + "/" + tp.partition() + "/" + offset;
    }

    /** After an INSERT with unknown outcome: drop the rows of this batch that did land. */
    private RowBatch<Long> removeLanded(TopicPartition tp, RowBatch<Long> batch, IngestException failure) {
        if (!failure.isOutcomeUnknown() || batch.isEmpty()) {
            return batch;
        }
        try {
            long min = batch.tag(0);
            long max = batch.tag(batch.rows() - 1);
            Set<Long> landed = landedOffsets(tp, min, max);
            if (landed.isEmpty()) {
                return batch;
            }
            ctx.metrics.duplicatesSkipped(landed.size());
            LOG.info("journal {}: {} rows of {}[{}, {}] had landed before the failure; not inserting them again",
                    config.name(), landed.size(), tp, min, max);
            return batch.select(0, batch.rows(), o -> !landed.contains(o));
        } catch (IngestException e) {
            return batch; // still unreachable: the next retry asks again
        }
    }

    private Set<Long> landedOffsets(TopicPartition tp, long from, long toInclusive) {
        String body = ctx.http.query("SELECT " + ClickHouseTarget.OFFSET_COLUMN + " FROM " + config.table() + " WHERE "
                + ClickHouseTarget.PARTITION_COLUMN + " = " + tp.partition() + " AND " + ClickHouseTarget.OFFSET_COLUMN
                + " BETWEEN " + from + " AND " + toInclusive + " FORMAT TabSeparated");
        Set<Long> out = new HashSet<>();
        for (String line : ClickHouseTarget.lines(body)) {
            out.add(Long.parseLong(line.strip()));
        }
        return out;
    }

    /** Tracks (re)assignments: a new partition starts at its committed offset, skipping rows already landed. */
    private void syncAssignment(Consumer consumer) {
        Set<TopicPartition> now = consumer.assignment();
        partitions.keySet().removeIf(tp -> {
            if (!now.contains(tp)) {
                LOG.info("journal {}: {} revoked", config.name(), tp);
                return true;
            }
            return false;
        });
        for (TopicPartition tp : now) {
            if (!partitions.containsKey(tp)) {
                PartitionState ps = new PartitionState(tp);
                if (offsetColumns) {
                    long from = consumer.committed(tp).orElse(0L);
                    ps.landed = landedOffsetsWithRetry(tp, from);
                    if (!ps.landed.isEmpty()) {
                        LOG.info("journal {}: {} offsets of {} at or after committed {} already in {}; skipping them",
                                config.name(), ps.landed.size(), tp, from, config.table());
                    }
                }
                partitions.put(tp, ps);
            }
        }
    }

    private Set<Long> landedOffsetsWithRetry(TopicPartition tp, long from) {
        Backoff backoff = new Backoff(config.retryInitialMs(), config.retryMaxMs());
        while (true) {
            try {
                return landedOffsets(tp, from, Long.MAX_VALUE);
            } catch (IngestException e) {
                LOG.warn("journal {}: cannot read landed offsets of {} yet: {}", config.name(), tp, e.getMessage());
                try {
                    backoff.pause();
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** Commits, per partition, the end of the longest prefix of finished batches. */
    private void commitCompleted(Consumer consumer) {
        InFlight f;
        Set<PartitionState> touched = new HashSet<>();
        while ((f = completions.poll()) != null) {
            inFlightCount--;
            PartitionState ps = partitions.get(f.partition);
            if (ps == null || !ps.inFlight.contains(f)) {
                continue; // revoked meanwhile: the new owner re-reads from the committed offset
            }
            ps.done.add(f);
            touched.add(ps);
        }
        Map<TopicPartition, Long> commits = new HashMap<>();
        for (PartitionState ps : touched) {
            while (!ps.inFlight.isEmpty() && ps.done.contains(ps.inFlight.peek())) {
                InFlight head = ps.inFlight.poll();
                ps.done.remove(head);
                if (head.failed) {
                    // gave up (closing): do not commit past it; it is re-read after restart
                    ps.inFlight.clear();
                    ps.done.clear();
                    break;
                }
                commits.put(ps.partition, head.to);
            }
        }
        if (!commits.isEmpty()) {
            consumer.commitSync(commits);
        }
    }

    private void drain(Consumer consumer) throws InterruptedException {
        for (PartitionState ps : partitions.values()) {
            while (!seal(ps)) {
                InFlight f = completions.poll(100, TimeUnit.MILLISECONDS);
                if (f != null) {
                    completions.add(f);
                    commitCompleted(consumer);
                }
            }
        }
        long deadline = System.nanoTime() + config.closeTimeoutMs() * 1_000_000L + 5_000_000_000L;
        while (inFlightCount > 0 && System.nanoTime() < deadline) {
            InFlight f = completions.poll(100, TimeUnit.MILLISECONDS);
            if (f != null) {
                completions.add(f);
                commitCompleted(consumer);
            }
        }
    }

    @Override
    public void close() {
        if (!running) {
            return;
        }
        running = false;
        ctx.giveUpAfter(config.closeTimeoutMs());
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        insertThreads.shutdown();
        ctx.close();
    }
}
