package io.sluice.ingest.internal;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.TopicPartition;
import io.sluice.ingest.ConsumerFactory;
import io.sluice.ingest.Guarantee;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.IngestException;
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

/**
 * The one ingest engine: batch → insert → commit, in order, supervised. A member of a consumer group on the topic,
 * read through {@link Consumer} from whatever source the {@link ConsumerFactory} opens (the embedded broker, a
 * remote broker, Kafka, or a member of a Redis stream's consumer group: {@link StreamGroupConsumer}, whose commit is
 * the XACK of the entries below the committed position and whose seek holds records back instead of moving the
 * group); what becomes of a batch is the {@link BatchSink}'s business (the offset-range strategy's INSERT, an
 * {@link io.sluice.ingest.EventSink}'s writes, or the stream strategies' INSERT of entries, {@link EntryBatches}).
 *
 * <p>One thread (the poller) owns the {@link Consumer} (not thread-safe) and all partition state; up to
 * {@code max.in.flight} batches per shard are landed in parallel by insert threads, which report back through a
 * queue. <b>A partition's committed offset only moves over batches that landed, in offset order</b>: a batch is
 * committed after it and every earlier batch of its partition landed; a batch that failed makes the loop start
 * again from the committed offsets instead of committing past it.
 *
 * <p><b>Batches</b> are offset ranges of one partition, cut at multiples of {@code batch.rows} (so a full batch is
 * the same range after a restart) and of the fixed exclusion slot {@link IdempotentInsert#SLOT} (the same whatever
 * the settings), or earlier by {@code batch.bytes} / {@code linger.ms}, and never across a gap in the offsets. A
 * sink whose batches of one partition must not overlap in time ({@link BatchSink#onePerPartition}) gets them one
 * after the other; the others get up to {@code max.in.flight} per shard at once.
 *
 * <p><b>Back-pressure.</b> At {@code max.in.flight} batches in flight with every open batch full, the poller
 * stops polling and waits for an insert to finish (polling at least every quarter session timeout to keep its
 * group membership); a record a partition cannot take (its shard at capacity, or the sink refusing it) is sought
 * back and read again later. Nothing is dropped.
 *
 * <p><b>Supervised</b> by one {@link SupervisedLoop}: the target unreachable at start, the broker away, a failed
 * batch: the loop starts again after a backoff; a configuration error stops it ({@link PipelineState#FAILED}); a
 * missing topic is waited for when the pipeline was started so ({@link Supervision.MissingTopic#WAIT}).
 *
 * @param <B> the sink's batch type
 */
public final class IngestEngine<B> implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(IngestEngine.class);

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

    /** A sealed batch waiting for its partition's previous one ({@link BatchSink#onePerPartition}). */
    private record Queued(InFlight flight, Object batch) {
    }

    private final class PartitionState {
        final TopicPartition partition;
        B open;
        long openFrom = -1;
        /** The next offset to take: every offset below it since the partition was assigned is in a batch or skipped as landed. */
        long openTo = -1;
        long openedNanos;
        final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();
        final ArrayDeque<InFlight> done = new ArrayDeque<>();
        /** The batch being inserted, and those sealed after it, waiting for it ({@link BatchSink#onePerPartition}). */
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
    private final BatchSink<B> sink;
    private final Supervision supervision = new Supervision();
    private final ConsumerFactory consumers;
    private final int shardCount;
    private final ExecutorService insertThreads;
    private final LinkedBlockingQueue<InFlight> completions = new LinkedBlockingQueue<>();
    private final Map<TopicPartition, PartitionState> partitions = new HashMap<>();
    private final SupervisedLoop loop;
    /** The poller polls at least this often, even at capacity (group membership; a stream member's keep-alive). */
    private final long maxPollIntervalMs;
    private int inFlightCount; // poller thread only
    private final int[] shardInFlight; // poller thread only: max.in.flight applies per shard, so a stuck shard holds back only its partitions
    private volatile boolean closed;

    /**
     * Opens the sink at once when its target answers (a configuration error is thrown here); when it does not, the
     * loop keeps trying in the background ({@link PipelineState#RETRYING}). Starts the poller thread.
     *
     * @throws io.sluice.core.SluiceException.InvalidConfigException if the target does not fit the configuration
     */
    public IngestEngine(IngestConfig config, BatchSink<B> sink, ConsumerFactory consumers, Supervision.MissingTopic missingTopic) {
        this(config, "sluice-ingest-" + config.name(), sink, consumers, missingTopic, Long.MAX_VALUE);
    }

    /**
     * As {@link #IngestEngine(IngestConfig, BatchSink, ConsumerFactory, Supervision.MissingTopic)}, with threads named
     * {@code <threadPrefix>-poller} and {@code <threadPrefix>-insert-<n>}, polling at least every
     * {@code maxPollIntervalMs} (and every quarter session timeout) while at capacity: a source that must show
     * it is alive more often than a group session (a Redis stream member keeping its entries) sets it.
     */
    IngestEngine(IngestConfig config, String threadPrefix, BatchSink<B> sink, ConsumerFactory consumers,
                 Supervision.MissingTopic missingTopic, long maxPollIntervalMs) {
        this.config = config;
        this.maxPollIntervalMs = maxPollIntervalMs;
        this.sink = sink;
        this.consumers = consumers;
        try {
            sink.open();
        } catch (IngestException e) {
            LOG.warn("ingest {}: ClickHouse not reachable at start ({}); retrying in the background", config.name(), e.getMessage());
            supervision.retrying("ClickHouse not reachable at start: " + e.getMessage());
        }
        this.shardCount = Math.max(1, sink.shards());
        this.shardInFlight = new int[shardCount];
        AtomicInteger n = new AtomicInteger();
        this.insertThreads = Executors.newFixedThreadPool(config.maxInFlight() * shardCount, r ->
                new Thread(r, threadPrefix + "-insert-" + n.incrementAndGet()));
        this.loop = new SupervisedLoop(config.name(), threadPrefix + "-poller", supervision, missingTopic,
                new Backoff(config.retryInitialMs(), config.retryMaxMs()), new SupervisedLoop.Body() {
                    @Override
                    public void run(Backoff backoff) throws InterruptedException {
                        sink.open();
                        consume(backoff);
                    }

                    @Override
                    public void abandon() {
                        abandonAll();
                    }
                });
        loop.start();
    }

    /** The engine feeding an {@link io.sluice.ingest.EventSink} (every strategy but offset-range); closing the engine closes the sink. */
    public static IngestEngine<?> feeding(io.sluice.ingest.EventSink sink, IngestConfig config, ConsumerFactory consumers,
                                          Supervision.MissingTopic missingTopic) {
        return new IngestEngine<>(config, new EventSinkBatches(sink), consumers, missingTopic);
    }

    public Supervision supervision() {
        return supervision;
    }

    /** The sink's guarantee, or null until its target answered. */
    public Guarantee guarantee() {
        return sink.guarantee();
    }

    public Map<String, Number> metrics() {
        return sink.metrics();
    }

    private boolean running() {
        return loop.running();
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
            completions.add(q.flight()); // never sent: completes at once, so the in-flight counts come back
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
            long heartbeatNanos = Math.min(cc.sessionTimeoutMillis() / 4, maxPollIntervalMs) * 1_000_000L;
            long lastPollNanos = System.nanoTime();
            while (running()) {
                if (inFlightCount >= config.maxInFlight() * shardCount && !hasRoom()) {
                    // At capacity and every open batch full: wait for an insert to finish rather than polling records
                    // we could not take (they would be sought back and read again). While a batch still has room it
                    // keeps filling, so the next batch is ready when an insert thread frees up. Still poll at least
                    // every heartbeatNanos so the group keeps this member; meanwhile new events wait in the source.
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
                String failure = sink.lastFailure();
                if (failure != null) {
                    supervision.retrying(failure);
                } else {
                    supervision.running();
                    backoff.reset();
                }
                Set<TopicPartition> blocked = new HashSet<>();
                Set<TopicPartition> rewound = null;
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
                        skip = ps == null || blocked.contains(tp) || (rewound != null && rewound.contains(tp));
                    }
                    if (skip) {
                        continue;
                    }
                    if (r.offset() < ps.openTo) {
                        // Already taken: the consumer went back to the committed offset under us (its session expired
                        // while this thread was busy, or a rebalance gave it the same partitions again, all within one
                        // poll, so the assignment looks unchanged). Taking these records again would insert rows still in
                        // flight a second time, cut into other batches (no block deduplication, no query-id exclusion):
                        // read on from where this partition's batches end instead.
                        LOG.info("ingest {}: the consumer went back to offset {} of {} (its group membership was renewed) while"
                                + " offsets up to {} are already taken; reading on from {}", config.name(), r.offset(), ps.partition,
                                ps.openTo - 1, ps.openTo);
                        consumer.seek(ps.partition, ps.openTo);
                        if (rewound == null) {
                            rewound = new HashSet<>();
                        }
                        rewound.add(ps.partition);
                        skip = true;
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
                long now = System.nanoTime();
                for (PartitionState p : partitions.values()) {
                    // lingered, or full and left open at capacity: sealed as soon as its shard has room
                    if (p.open != null && p.openTo > p.openFrom && (now - p.openedNanos >= lingerNanos || isFull(p))) {
                        seal(p);
                    }
                }
                if (!blocked.isEmpty() && blocked.size() == partitionsIn(records)) {
                    // every partition polled is waiting for its shard or its sink: wait for an insert to finish
                    // instead of re-reading the same records in a tight loop
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

    /** Adds a record to its partition's open batch; false when that batch is full and cannot be sealed yet, or the sink refused it. */
    private boolean take(PartitionState ps, ConsumerRecord r) {
        if (ps.open != null && isFull(ps) && !seal(ps)) {
            return false;
        }
        boolean fresh = ps.open == null;
        if (fresh) {
            // sized like the partition's last batch, so a full batch is built without growing (copying) its array
            ps.open = sink.newBatch(Math.min(config.batchRows(), Math.max(4096, ps.lastRows)),
                    (int) Math.min(config.batchBytes(), Math.max(1 << 16, ps.lastBytes + ps.lastBytes / 8L)));
            ps.openFrom = r.offset();
            ps.openTo = r.offset();
            ps.openedNanos = System.nanoTime();
        }
        if (!ps.landed.isEmpty() && ps.landed.contains(r.offset())) {
            sink.skipped(r);
        } else if (!sink.add(ps.open, r)) {
            if (fresh) {
                ps.open = null;
            }
            return false;
        }
        ps.openTo = r.offset() + 1;
        if (isFull(ps)) {
            seal(ps); // at capacity it stays open and full: the partition's next record is refused and re-read later
        }
        return true;
    }

    /**
     * Full at batch.rows offsets, batch.rows rows (a record that holds several, such as a packed stream entry),
     * batch.bytes, an offset that is a multiple of batch.rows (aligned ranges), or the end of a fixed exclusion slot
     * ({@link IdempotentInsert#SLOT}: a batch never crosses one, whatever the settings).
     */
    private boolean isFull(PartitionState ps) {
        return isFull(ps.openFrom, ps.openTo, sink.bytes(ps.open), config.batchRows(), config.batchBytes())
                || ps.openTo > ps.openFrom && sink.rows(ps.open) >= config.batchRows();
    }

    /** The batching rule: a batch [from, to) holding {@code bytes} is full (see the class comment). */
    static boolean isFull(long from, long to, long bytes, int batchRows, int batchBytes) {
        long n = to - from;
        return n > 0 && (n >= batchRows || bytes >= batchBytes || to % batchRows == 0 || to % IdempotentInsert.SLOT == 0);
    }

    /** Hands the open batch to an insert thread; false when max.in.flight batches of its shard are already in flight. */
    private boolean seal(PartitionState ps) {
        if (ps.open == null || ps.openTo <= ps.openFrom) {
            return true;
        }
        int shard = sink.shardOf(ps.partition);
        if (shardInFlight[shard] >= config.maxInFlight()) {
            return false;
        }
        B batch = ps.open;
        ps.lastRows = sink.rows(batch);
        ps.lastBytes = sink.bytes(batch);
        InFlight f = new InFlight(ps.partition, ps.openFrom, ps.openTo);
        ps.open = null;
        ps.inFlight.add(f);
        inFlightCount++;
        shardInFlight[shard]++;
        if (sink.onePerPartition() && ps.sending != null) {
            ps.queued.add(new Queued(f, batch));
        } else {
            ps.sending = f;
            insertThreads.execute(() -> insert(f, batch));
        }
        return true;
    }

    /**
     * A sink whose batches of one partition must not run at the same time ({@link BatchSink#onePerPartition}: the
     * idempotent insert, one query id per slot) gets them one after the other: a batch sealed meanwhile waits in
     * {@code queued} (it counts as in flight, so max.in.flight still bounds them) and is sent when the previous one
     * completes — records are not refused and re-read, which would wait for the consumer's fetches.
     */
    @SuppressWarnings("unchecked")
    private void sendNext(PartitionState ps) {
        Queued q = ps.queued.poll();
        ps.sending = q == null ? null : q.flight();
        if (q != null) {
            B batch = (B) q.batch();
            insertThreads.execute(() -> insert(q.flight(), batch));
        }
    }

    private void insert(InFlight f, B batch) {
        try {
            sink.insert(f.partition, f.from, f.to, batch, () -> f.abandoned);
        } catch (Throwable t) {
            // whatever it was, this range did not (all) land: the poller must not commit past it
            f.failed = true;
            if (!f.abandoned) {
                LOG.error("ingest {}: batch {}[{}, {}) not landed: {}", config.name(), f.partition, f.from, f.to, t.toString());
            }
            if (t instanceof VirtualMachineError) {
                throw (VirtualMachineError) t;
            }
        } finally {
            completions.add(f);
        }
    }

    /**
     * Tracks (re)assignments. A revoked partition's batches in flight are abandoned: they stop retrying, and one
     * already on its way is harmless (the sink's guarantee covers a late copy). A new partition starts at its
     * committed offset, skipping rows already landed when the sink can tell: they can only be within
     * max.in.flight batches of it.
     */
    private void syncAssignment(Consumer consumer) {
        Set<TopicPartition> now = consumer.assignment();
        partitions.values().removeIf(ps -> {
            if (!now.contains(ps.partition)) {
                LOG.info("ingest {}: {} revoked; abandoning its {} batch(es) in flight", config.name(), ps.partition, ps.inFlight.size());
                abandon(ps);
                return true;
            }
            return false;
        });
        for (TopicPartition tp : now) {
            if (!partitions.containsKey(tp)) {
                PartitionState ps = new PartitionState(tp);
                if (sink.skipsLanded()) {
                    long from = consumer.committed(tp).orElse(0L);
                    long span = (long) config.maxInFlight() * config.batchRows();
                    ps.landed = landedWithRetry(tp, from, from + span - 1);
                    if (!ps.landed.isEmpty()) {
                        LOG.info("ingest {}: {} offsets of {} at or after committed {} already in {}; skipping them",
                                config.name(), ps.landed.size(), tp, from, config.table());
                    }
                }
                partitions.put(tp, ps);
            }
        }
    }

    private Set<Long> landedWithRetry(TopicPartition tp, long from, long toInclusive) {
        Backoff backoff = new Backoff(config.retryInitialMs(), config.retryMaxMs());
        while (true) {
            try {
                return sink.landed(tp, from, toInclusive);
            } catch (IngestException e) {
                LOG.warn("ingest {}: cannot read landed offsets of {} yet: {}", config.name(), tp, e.getMessage());
                supervision.retrying("cannot read landed offsets: " + e.getMessage());
                if (!running()) {
                    throw e;
                }
                try {
                    backoff.pause(() -> !running());
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
            shardInFlight[sink.shardOf(f.partition)]--;
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
        if (failed != null && running()) {
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

    /**
     * Stops polling, lands and commits what was taken (up to {@code close.timeout.ms}), stops the threads and closes
     * the sink. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        sink.giveUpAfter(config.closeTimeoutMs());
        loop.stop();
        insertThreads.shutdown();
        supervision.closed();
        sink.close();
    }
}
