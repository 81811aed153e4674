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
import io.sluice.ingest.Guarantee;
import io.sluice.ingest.PipelineState;
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
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * Strategy journal: a member of a Sluice consumer group on the topic. One thread owns the {@link Consumer}
 * (not thread-safe) and all partition state; up to {@code max.in.flight} batches are inserted in parallel by
 * insert threads, which report back through a queue. A partition's committed offset only moves over batches
 * ClickHouse accepted, in offset order.
 *
 * <p>Batches are offset ranges of one partition, cut at multiples of {@code batch.rows} (so a full batch is the
 * same range after a restart), at the boundaries of the fixed exclusion slots ({@link IdempotentInsert#SLOT}
 * offsets, the same whatever the settings), or earlier by {@code batch.bytes} / {@code linger.ms}. Every attempt at
 * a batch sends the same rows in the same order.
 *
 * <p><b>Guarantee</b> ({@link Guarantee}, chosen at start from what the server and the table offer, logged, and
 * exported): no loss — an offset is committed only after its row is in ClickHouse (or dead-lettered), and a batch
 * that failed makes the loop start again from the committed offsets instead of committing past it. Duplicates:
 * <ul>
 *   <li>offset columns, any server: {@link Guarantee#EXACTLY_ONCE_IDEMPOTENT_INSERT} ({@link IdempotentInsert},
 *       query id {@code sluice-<table>-<topic>-<partition>-s<slot>}, one slot's batches one at a time);</li>
 *   <li>offset columns, {@code Replicated*MergeTree}: {@link Guarantee#EXACTLY_ONCE_REPLICATED_DEDUP};</li>
 *   <li>offset columns, {@code insert_deduplication_token} and a deduplicating table:
 *       {@link Guarantee#EXACTLY_ONCE_DEDUP_TOKEN};</li>
 *   <li>no offset columns: {@link Guarantee#AT_LEAST_ONCE}.</li>
 * </ul>
 *
 * <p><b>Supervised.</b> ClickHouse unreachable at start, the broker away, a failed batch: the loop starts again
 * after a backoff ({@link Supervision}); a configuration error stops it ({@link PipelineState#FAILED}).
 */
public final class JournalIngestor implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(JournalIngestor.class);

    private static final class InFlight {
        final TopicPartition partition;
        final long from;
        final long to; // exclusive next-offset
        volatile boolean failed;
        /** The batch is no longer wanted (partition revoked, loop restarted): stop retrying, ignore its outcome. */
        volatile boolean abandoned;

        InFlight(TopicPartition partition, long from, long to) {
            this.partition = partition;
            this.from = from;
            this.to = to;
        }
    }

    private record Queued(InFlight flight, RowBatch<Long> batch) {
    }

    private final class PartitionState {
        final TopicPartition partition;
        RowBatch<Long> open;
        long openFrom = -1;
        long openTo = -1;
        final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();
        final ArrayDeque<InFlight> done = new ArrayDeque<>();
        /** The batch being inserted, and those sealed after it, waiting for it (idempotent insert only: {@link #mustQueue}). */
        InFlight sending;
        final ArrayDeque<Queued> queued = new ArrayDeque<>();
        Set<Long> landed = Set.of();
        /** Rows and bytes of the last batch sealed: the size of the next one's buffer. */
        int lastRows;
        int lastBytes;

        PartitionState(TopicPartition partition) {
            this.partition = partition;
        }
    }

    /** Thrown by the loop when a batch failed: start again from the committed offsets. */
    private static final class BatchFailedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BatchFailedException(String message) {
            super(message);
        }
    }

    private final IngestConfig config;
    private final IngestMetrics metrics = new IngestMetrics();
    private final Supervision supervision = new Supervision();
    private volatile SinkContext ctx;
    private volatile Guarantee guarantee;
    private BatchInserter inserter;
    private IdempotentInsert idempotent;
    /** Replicated table ({@link Guarantee#EXACTLY_ONCE_REPLICATED_DEDUP}): what really landed, else null. */
    private volatile ReplicatedLanding replicated;
    private static final int UNKNOWN_STATUS_OF_INSERT = 319;
    /** One server, or the shards of a cluster target (clickhouse.shards); set with ctx. */
    private volatile Shards shards;
    private final int shardCount;
    private final ConsumerFactory consumers;
    private final ExecutorService insertThreads;
    private final LinkedBlockingQueue<InFlight> completions = new LinkedBlockingQueue<>();
    private final Map<TopicPartition, PartitionState> partitions = new HashMap<>();
    private final Thread thread;
    private int inFlightCount; // poller thread only
    private final int[] shardInFlight; // poller thread only: max.in.flight applies per shard, so a stuck shard holds back only its partitions
    private volatile boolean running = true;

    /**
     * Checks the table at once when ClickHouse answers (a configuration error is thrown here); when it does not,
     * the pipeline thread keeps trying in the background ({@link PipelineState#STARTING}).
     *
     * @throws io.sluice.core.SluiceException.InvalidConfigException if the table is missing or does not fit
     */
    public JournalIngestor(IngestConfig config, ConsumerFactory consumers) {
        this.config = config;
        this.shardCount = Math.max(1, config.shards().size());
        this.shardInFlight = new int[shardCount];
        this.consumers = consumers;
        try {
            openContext();
        } catch (IngestException e) {
            LOG.warn("journal {}: ClickHouse not reachable at start ({}); retrying in the background", config.name(), e.getMessage());
            supervision.retrying("ClickHouse not reachable at start: " + e.getMessage());
        }
        AtomicInteger n = new AtomicInteger();
        this.insertThreads = Executors.newFixedThreadPool(config.maxInFlight() * shardCount, r ->
                new Thread(r, "sluice-ingest-" + config.name() + "-insert-" + n.incrementAndGet()));
        this.thread = new Thread(this::run, "sluice-ingest-" + config.name() + "-journal");
        this.thread.start();
    }

    private void openContext() {
        SinkContext c = new SinkContext(config, RowFormat.Provenance.OFFSETS, metrics);
        Guarantee g = choose(c.target);
        this.inserter = c.inserter(c.format, Map.of(), c.clickHouseDeadLetters());
        this.shards = Shards.open(c, inserter);
        this.idempotent = g == Guarantee.EXACTLY_ONCE_IDEMPOTENT_INSERT
                ? new IdempotentInsert(c.target, config.rowEncoder(), RowFormat.Provenance.OFFSETS) : null;
        this.replicated = g == Guarantee.EXACTLY_ONCE_REPLICATED_DEDUP ? new ReplicatedLanding(config.database(), config.tableName()) : null;
        this.guarantee = g;
        this.ctx = c;
        switch (g) {
            case EXACTLY_ONCE_IDEMPOTENT_INSERT -> LOG.info("journal {}: guarantee {}: table {} ({}) has offset columns;"
                            + " each batch is an idempotent INSERT ... SELECT with one query_id per offset slot (ClickHouse {})",
                    config.name(), g, config.table(), c.target.engine(), c.target.version());
            case EXACTLY_ONCE_REPLICATED_DEDUP -> LOG.info("journal {}: guarantee {}: table {} is {}; every retry sends the identical"
                    + " block, which the server drops", config.name(), g, config.table(), c.target.engine());
            case EXACTLY_ONCE_DEDUP_TOKEN -> LOG.info("journal {}: guarantee {}: ClickHouse {} deduplicates retried batches by"
                    + " insert_deduplication_token on table {}", config.name(), g, c.target.version(), config.table());
            default -> LOG.warn("journal {}: guarantee {}: table {} has no {}/{} columns: a retried or late INSERT may land twice",
                    config.name(), g, config.table(), ClickHouseTarget.PARTITION_COLUMN, ClickHouseTarget.OFFSET_COLUMN);
        }
    }

    /** The journal's guarantee on this server and table (see the class comment). */
    public static Guarantee choose(ClickHouseTarget target) {
        if (!target.hasOffsetColumns()) {
            return Guarantee.AT_LEAST_ONCE;
        }
        if (target.isReplicated()) {
            return Guarantee.EXACTLY_ONCE_REPLICATED_DEDUP;
        }
        if (target.supportsSetting("insert_deduplication_token") && target.deduplicatesInserts()) {
            return Guarantee.EXACTLY_ONCE_DEDUP_TOKEN;
        }
        return Guarantee.EXACTLY_ONCE_IDEMPOTENT_INSERT;
    }

    public IngestMetrics metrics() {
        return metrics;
    }

    /** The guarantee detected at start, or null until ClickHouse answered. */
    public Guarantee guarantee() {
        return guarantee;
    }

    public Supervision supervision() {
        return supervision;
    }

    /** Set when the pipeline stopped for good (configuration error). */
    public Throwable failure() {
        return supervision.failure();
    }

    private void run() {
        Backoff backoff = new Backoff(config.retryInitialMs(), config.retryMaxMs());
        while (running) {
            try {
                if (ctx == null) {
                    openContext();
                }
                consume(backoff);
                break;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (Throwable t) {
                if (Supervision.isConfigError(t) || t instanceof Error) {
                    supervision.failed(t);
                    LOG.error("journal ingestor {} stopped: {}", config.name(), t.toString(), t);
                    break;
                }
                abandonAll();
                if (!running) {
                    break;
                }
                supervision.retrying(t.getMessage() != null ? t.getMessage() : t.toString());
                supervision.restarted();
                LOG.warn("journal {}: {}; starting again from the committed offsets after a backoff", config.name(), t.toString());
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

    /** Every partition's state is dropped; batches in flight are abandoned (their outcome no longer matters). */
    private void abandonAll() {
        for (PartitionState ps : partitions.values()) {
            abandon(ps);
        }
        partitions.clear();
    }

    private void abandon(PartitionState ps) {
        for (InFlight f : ps.inFlight) {
            f.abandoned = true;
        }
        for (Queued q : ps.queued) {
            completions.add(q.flight); // never sent: completes at once, so the in-flight counts come back
        }
        ps.queued.clear();
        ps.sending = null;
        ps.inFlight.clear();
        ps.done.clear();
        ps.open = null;
    }

    private void consume(Backoff backoff) throws InterruptedException {
        ConsumerConfig cc = ConsumerConfig.builder().groupId(config.group()).clientId("sluice-ingest-" + config.name())
                .offsetReset(OffsetReset.EARLIEST).maxPollRecords(Math.min(100_000, Math.max(500, config.batchRows())))
                .build();
        try (Consumer consumer = consumers.open(cc)) {
            consumer.subscribe(config.topic());
            long lingerNanos = config.lingerMs() * 1_000_000L;
            long heartbeatNanos = cc.sessionTimeoutMillis() * 1_000_000L / 4;
            long lastPollNanos = System.nanoTime();
            while (running) {
                if (inFlightCount >= config.maxInFlight() * shardCount && !hasRoom()) {
                    // At capacity and every open batch full: wait for an insert to finish rather than polling records
                    // we could not take (they would be sought back and read again). While a batch still has room it
                    // keeps filling, so the next INSERT body is ready when an insert thread frees up. Still poll at
                    // least every heartbeatNanos so the group keeps this member; meanwhile new events wait in the journal.
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
                if (metrics.lastFailure() != null) {
                    supervision.retrying(metrics.lastFailure());
                } else {
                    supervision.running();
                    backoff.reset();
                }
                Set<TopicPartition> blocked = new HashSet<>();
                // A poll returns runs of records of one partition: look its state up once per run, not per record.
                PartitionState ps = null;
                boolean skip = true;
                String runTopic = null;
                int runPartition = -1;
                for (ConsumerRecord r : records) {
                    if (r.partition() != runPartition || !r.topic().equals(runTopic)) {
                        TopicPartition tp = r.topicPartition();
                        runTopic = r.topic();
                        runPartition = r.partition();
                        ps = partitions.get(tp);
                        skip = ps == null || blocked.contains(tp);
                    }
                    if (skip) {
                        continue;
                    }
                    if (ps.open != null && r.offset() != ps.openTo) {
                        // a gap (seek/rebalance): never let one batch span non-contiguous offsets
                        if (!seal(ps)) {
                            blocked.add(ps.partition);
                            skip = true;
                            consumer.seek(ps.partition, r.offset());
                            continue;
                        }
                    }
                    if (!take(ps, r)) {
                        blocked.add(ps.partition);
                        skip = true;
                        consumer.seek(ps.partition, r.offset());
                    }
                }
                for (PartitionState p : partitions.values()) {
                    if (p.open != null && p.openTo > p.openFrom && p.open.ageNanos() >= lingerNanos) {
                        seal(p);
                    }
                }
                if (!blocked.isEmpty() && blocked.size() == partitionsIn(records)) {
                    // every partition polled is waiting for its shard: wait for an insert to finish instead of
                    // re-reading the same records in a tight loop
                    InFlight f = completions.poll(100, TimeUnit.MILLISECONDS);
                    if (f != null) {
                        completions.add(f);
                    }
                }
            }
            drain(consumer);
        }
    }

    /** True if some assigned partition can take a record into its open (or a new) batch without sealing. */
    private boolean hasRoom() {
        for (PartitionState ps : partitions.values()) {
            if (ps.open == null || !isFull(ps)) {
                return true;
            }
        }
        return false;
    }

    private static int partitionsIn(List<ConsumerRecord> records) {
        Set<TopicPartition> tps = new HashSet<>();
        for (ConsumerRecord r : records) {
            tps.add(r.topicPartition());
        }
        return tps.size();
    }

    /** Adds a record to its partition's open batch; false when that batch is full and cannot be sealed yet. */
    private boolean take(PartitionState ps, ConsumerRecord r) {
        if (ps.open != null && isFull(ps) && !seal(ps)) {
            return false;
        }
        if (ps.open == null) {
            // sized like the partition's last batch, so a full batch is built without growing (copying) its array
            ps.open = new RowBatch<>(Math.min(config.batchRows(), Math.max(4096, ps.lastRows)),
                    (int) Math.min(config.batchBytes(), Math.max(1 << 16, ps.lastBytes + ps.lastBytes / 8L)));
            ps.openFrom = r.offset();
            ps.openTo = r.offset();
        }
        metrics.accepted(1);
        if (!ps.landed.isEmpty() && ps.landed.contains(r.offset())) {
            metrics.duplicatesSkipped(1);
        } else {
            try {
                byte[] row = inserter.format().encode(r.value());
                inserter.format().append(ps.open, row, r.partition(), r.offset(), r.offset());
            } catch (IllegalArgumentException e) {
                ctx.clickHouseDeadLetters().write(List.of(new DeadLetters.Letter(r.value(), e.getMessage(), source(ps.partition, r.offset()))));
                metrics.deadLettered(1);
            }
        }
        ps.openTo = r.offset() + 1;
        if (isFull(ps)) {
            seal(ps); // at capacity it stays open and full: the partition's next record is refused and re-read later
        }
        return true;
    }

    /**
     * Full at batch.rows offsets, batch.bytes, an offset that is a multiple of batch.rows (aligned ranges), or the
     * end of an exclusion slot ({@link IdempotentInsert#SLOT}: a batch never crosses one, whatever the settings).
     */
    private boolean isFull(PartitionState ps) {
        long n = ps.openTo - ps.openFrom;
        return n > 0 && (n >= config.batchRows() || ps.open.bytes() >= config.batchBytes() || ps.openTo % config.batchRows() == 0
                || ps.openTo % IdempotentInsert.SLOT == 0);
    }

    /**
     * With the idempotent insert, a partition's batches of one slot share a query id, so a partition sends one at a
     * time: a second one sent meanwhile would only be refused (216) and retried. A batch sealed while the
     * partition's previous one is still being inserted waits in {@code queued} (it counts as in flight, so
     * {@code max.in.flight} still bounds them) and is sent when that one completes — without refusing records and
     * seeking back, which would wait for the consumer's fetches.
     */
    private boolean mustQueue(PartitionState ps) {
        return idempotent != null && ps.sending != null;
    }

    /** Sends the partition's next queued batch, if any (poller thread). */
    private void sendNext(PartitionState ps) {
        Queued q = ps.queued.poll();
        ps.sending = q == null ? null : q.flight;
        if (q != null) {
            insertThreads.execute(() -> insert(q.flight, q.batch));
        }
    }

    /** Hands the open batch to an insert thread; false when max.in.flight batches are already in flight. */
    private boolean seal(PartitionState ps) {
        if (ps.open == null || ps.openTo <= ps.openFrom) {
            return true;
        }
        int shard = shards.indexOf(ps.partition);
        if (shardInFlight[shard] >= config.maxInFlight()) {
            return false;
        }
        RowBatch<Long> batch = ps.open;
        ps.lastRows = batch.rows();
        ps.lastBytes = batch.bytes();
        InFlight f = new InFlight(ps.partition, ps.openFrom, ps.openTo);
        ps.open = null;
        ps.inFlight.add(f);
        inFlightCount++;
        shardInFlight[shard]++;
        if (mustQueue(ps)) {
            ps.queued.add(new Queued(f, batch));
        } else {
            ps.sending = f;
            insertThreads.execute(() -> insert(f, batch));
        }
        return true;
    }

    private void insert(InFlight f, RowBatch<Long> batch) {
        try {
            Map<String, String> settings = guarantee == Guarantee.EXACTLY_ONCE_DEDUP_TOKEN
                    ? Map.of("insert_deduplication_token", config.table() + "/" + source(f.partition, f.from) + "-" + f.to) : Map.of();
            Function<RowBatch<Long>, IdempotentInsert.Statement> statement = idempotent == null ? null
                    : b -> idempotent.offsets(f.partition.partition(), b.tag(0), b.tag(b.rows() - 1), queryId(f));
            BooleanSupplier abandon = () -> f.abandoned || ctx.givingUp();
            BatchInserter.RetryHook<Long> beforeRetry = replicated == null ? null : (b, failure) -> resolve(f, b, failure, abandon);
            shards.of(f.partition).inserter().insert(batch, beforeRetry, offset -> source(f.partition, offset), settings, statement,
                    abandon);
        } catch (Throwable t) {
            // whatever it was, this range did not (all) land: the poller must not commit past it
            f.failed = true;
            if (!f.abandoned) {
                LOG.error("journal {}: batch {}[{}, {}) not inserted: {}", config.name(), f.partition, f.from, f.to, t.toString());
            }
            if (t instanceof VirtualMachineError) {
                throw (VirtualMachineError) t;
            }
        } finally {
            completions.add(f);
        }
    }

    /**
     * Replicated table, before a retry: an INSERT whose outcome is unknown (319 after ZooKeeper went away, a timeout,
     * a cut connection) is first resolved on every replica of the shard ({@link ReplicatedLanding}): landed in
     * registered parts → nothing to retry; absent → the identical block again; partly (a range cut differently before
     * a restart) → only the rows not registered.
     */
    private RowBatch<Long> resolve(InFlight f, RowBatch<Long> batch, IngestException failure, BooleanSupplier abandon) {
        if (batch.isEmpty() || !(failure.isOutcomeUnknown() || failure.serverCode() == UNKNOWN_STATUS_OF_INSERT)) {
            return batch;
        }
        Shards.Shard shard = shards.of(f.partition);
        int p = f.partition.partition();
        long first = batch.tag(0);
        long last = batch.tag(batch.rows() - 1);
        Backoff backoff = new Backoff(config.retryInitialMs(), config.retryMaxMs());
        return switch (replicated.afterUnknownStatus(shard, p, first, last, batch.rows(), abandon, backoff,
                failure.serverCode() > 0 ? "code " + failure.serverCode() : "no answer")) {
            case LANDED -> batch.select(0, batch.rows(), o -> false); // nothing left to send
            case ABSENT -> batch;
            case PARTLY -> {
                Set<Long> there = replicated.registeredOffsets(shard, p, first, last);
                yield batch.select(0, batch.rows(), o -> !there.contains(o));
            }
        };
    }

    /**
     * One id per fixed offset slot ({@link IdempotentInsert#SLOT}, independent of every setting): every batch lies
     * inside one slot, so two overlapping batches (a retry, a late copy, a zombie member's batch cut by other
     * settings) share the id and the server never runs them at the same time.
     */
    private String queryId(InFlight f) {
        return IdempotentInsert.slotQueryId(config.table(), f.partition.topic(), f.partition.partition(), f.from);
    }

    private static String source(TopicPartition tp, long offset) {
        return tp.topic() + "/" + tp.partition() + "/" + offset;
    }

    /** Asks every replica of the partition's shard that answers (a row may not have reached every replica yet). */
    private Set<Long> landedOffsets(TopicPartition tp, long from, long toInclusive) {
        if (replicated != null) {
            // a part a 319 left behind unregistered is visible but goes away: only registered parts count
            return replicated.registeredOffsets(shards.of(tp), tp.partition(), from, toInclusive);
        }
        Set<String> lines = shards.of(tp).queryAllReplicas("SELECT " + ClickHouseTarget.OFFSET_COLUMN + " FROM " + config.table() + " WHERE "
                + ClickHouseTarget.PARTITION_COLUMN + " = " + tp.partition() + " AND " + ClickHouseTarget.OFFSET_COLUMN
                + " BETWEEN " + from + " AND " + toInclusive + " FORMAT TabSeparated");
        Set<Long> out = new HashSet<>();
        for (String line : lines) {
            out.add(Long.parseLong(line.strip()));
        }
        return out;
    }

    /**
     * Tracks (re)assignments. A revoked partition's batches in flight are abandoned: they stop retrying, and one
     * already on its way is harmless (idempotent insert, identical block or token). A new partition starts at its
     * committed offset, skipping rows already landed: they can only be within max.in.flight batches of it.
     */
    private void syncAssignment(Consumer consumer) {
        Set<TopicPartition> now = consumer.assignment();
        partitions.values().removeIf(ps -> {
            if (!now.contains(ps.partition)) {
                LOG.info("journal {}: {} revoked; abandoning its {} batch(es) in flight", config.name(), ps.partition, ps.inFlight.size());
                abandon(ps);
                return true;
            }
            return false;
        });
        for (TopicPartition tp : now) {
            if (!partitions.containsKey(tp)) {
                PartitionState ps = new PartitionState(tp);
                if (guarantee != Guarantee.AT_LEAST_ONCE) {
                    long from = consumer.committed(tp).orElse(0L);
                    long span = (long) config.maxInFlight() * config.batchRows();
                    ps.landed = landedOffsetsWithRetry(tp, from, from + span - 1);
                    if (!ps.landed.isEmpty()) {
                        LOG.info("journal {}: {} offsets of {} at or after committed {} already in {}; skipping them",
                                config.name(), ps.landed.size(), tp, from, config.table());
                    }
                }
                partitions.put(tp, ps);
            }
        }
    }

    private Set<Long> landedOffsetsWithRetry(TopicPartition tp, long from, long toInclusive) {
        Backoff backoff = new Backoff(config.retryInitialMs(), config.retryMaxMs());
        while (true) {
            try {
                return landedOffsets(tp, from, toInclusive);
            } catch (IngestException e) {
                LOG.warn("journal {}: cannot read landed offsets of {} yet: {}", config.name(), tp, e.getMessage());
                supervision.retrying("cannot read landed offsets: " + e.getMessage());
                if (!running) {
                    throw e;
                }
                try {
                    backoff.pause(() -> !running);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /**
     * Commits, per partition, the end of the longest prefix of finished batches. A failed batch stops the loop
     * (it starts again from the committed offsets), so nothing is ever committed past a range that did not land.
     */
    private void commitCompleted(Consumer consumer) {
        InFlight f;
        Set<PartitionState> touched = new HashSet<>();
        while ((f = completions.poll()) != null) {
            inFlightCount--;
            shardInFlight[shards.indexOf(f.partition)]--;
            if (f.abandoned) {
                continue; // revoked or restarted meanwhile: the current owner re-reads from the committed offset
            }
            PartitionState ps = partitions.get(f.partition);
            if (ps == null || !ps.inFlight.contains(f)) {
                continue;
            }
            if (ps.sending == f) {
                sendNext(ps);
            }
            ps.done.add(f);
            touched.add(ps);
        }
        Map<TopicPartition, Long> commits = new HashMap<>();
        TopicPartition failed = null;
        for (PartitionState ps : touched) {
            while (!ps.inFlight.isEmpty() && ps.done.contains(ps.inFlight.peek())) {
                InFlight head = ps.inFlight.poll();
                ps.done.remove(head);
                if (head.failed) {
                    failed = ps.partition;
                    ps.inFlight.addFirst(head);
                    break;
                }
                commits.put(ps.partition, head.to);
            }
        }
        if (!commits.isEmpty()) {
            try {
                consumer.commitSync(commits);
            } catch (io.sluice.core.SluiceException.GroupException e) {
                // a newer generation owns these partitions: their new owner re-reads from the last accepted commit
                LOG.info("commit of {} refused: {}", commits.keySet(), e.getMessage());
            }
        }
        if (failed != null && running) {
            throw new BatchFailedException("a batch of " + failed + " did not land");
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
        SinkContext c = ctx;
        if (c != null) {
            c.giveUpAfter(config.closeTimeoutMs());
        }
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        insertThreads.shutdown();
        supervision.closed();
        if (shards != null) {
            shards.close();
        }
        ctx.close();
    }
}
