package io.sluice.ingest.internal;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerGroups;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.ingest.Guarantee;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.PipelineState;
import io.sluice.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine's decisions without any server: batching (rows, bytes, linger, aligned cuts), commit ordering,
 * back-pressure and the restart rule, over an in-memory topic read through Sluice's {@link Consumer} interface
 * and a {@link BatchSink} that records a history of what landed and what was committed. Safety properties are
 * checked over that history; waits are for the engine's progress (its polls), never fixed sleeps.
 */
class IngestEngineTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private IngestEngine<?> engine;

    @AfterEach
    void close() {
        if (engine != null) {
            engine.close();
        }
    }

    // ---- batching --------------------------------------------------------------------------------------------

    @Test
    void theBatchingRuleCutsAtBatchRowsAtAlignedOffsetsAndAtBatchBytes() {
        assertThat(IngestEngine.isFull(0, 0, 0, 10, 1024)).as("empty").isFalse();
        assertThat(IngestEngine.isFull(0, 9, 90, 10, 1024)).as("9 rows of 10").isFalse();
        assertThat(IngestEngine.isFull(0, 10, 100, 10, 1024)).as("batch.rows rows").isTrue();
        assertThat(IngestEngine.isFull(3, 10, 70, 10, 1024)).as("ends at an aligned offset").isTrue();
        assertThat(IngestEngine.isFull(3, 9, 1024, 10, 1024)).as("batch.bytes reached").isTrue();
        assertThat(IngestEngine.isFull(13, 19, 60, 10, 1024)).as("inside one slot, small").isFalse();
    }

    @Test
    void fullBatchesAreAlignedOffsetRangesAndTheRestLandsAtClose() {
        MemoryTopic topic = new MemoryTopic("t", 1).append(0, 25);
        RecordingSink sink = new RecordingSink();
        engine = new IngestEngine<>(config().batchRows(10).lingerMs(60_000).build(), sink, topic::consumer, Supervision.MissingTopic.FAIL);
        Await.until("two full batches", WAIT, () -> sink.landed().size() == 2);
        assertThat(sink.landed()).containsExactlyInAnyOrder("t-0[0,10)", "t-0[10,20)"); // two insert threads: either may finish first
        engine.close();
        assertThat(sink.landed()).containsExactlyInAnyOrder("t-0[0,10)", "t-0[10,20)", "t-0[20,25)");
        assertThat(topic.committed(0)).isEqualTo(25);
        assertThat(sink.rowsOf("t-0[20,25)")).containsExactly(20L, 21L, 22L, 23L, 24L);
    }

    @Test
    void lingerSealsAPartialBatch() {
        MemoryTopic topic = new MemoryTopic("t", 1).append(0, 5);
        RecordingSink sink = new RecordingSink();
        engine = new IngestEngine<>(config().batchRows(1_000).lingerMs(10).build(), sink, topic::consumer, Supervision.MissingTopic.FAIL);
        Await.until("the partial batch landed and was committed", WAIT, () -> topic.committed(0) == 5);
        assertThat(sink.landed()).containsExactly("t-0[0,5)");
    }

    @Test
    void batchBytesCutsABatchBeforeBatchRows() {
        MemoryTopic topic = new MemoryTopic("t", 1).append(0, 30, 100); // 100-byte events
        RecordingSink sink = new RecordingSink();
        engine = new IngestEngine<>(config().batchRows(1_000).batchBytes(1024).lingerMs(60_000).build(), sink, topic::consumer,
                Supervision.MissingTopic.FAIL);
        Await.until("two batches cut by bytes", WAIT, () -> sink.landed().size() == 2);
        assertThat(sink.landed()).containsExactlyInAnyOrder("t-0[0,11)", "t-0[11,22)"); // 11 × 100 B is the first >= 1024
    }

    // ---- commit ordering -------------------------------------------------------------------------------------

    @Test
    void aBatchIsCommittedOnlyAfterItAndEveryEarlierBatchLanded() {
        MemoryTopic topic = new MemoryTopic("t", 1).append(0, 30);
        RecordingSink sink = new RecordingSink().gated();
        topic.history = sink;
        engine = new IngestEngine<>(config().batchRows(10).lingerMs(60_000).maxInFlight(4).build(), sink, topic::consumer,
                Supervision.MissingTopic.FAIL);
        Await.until("three batches in flight", WAIT, () -> sink.started().size() == 3);
        sink.release("t-0[20,30)");
        sink.release("t-0[10,20)");
        Await.until("two later batches landed", WAIT, () -> sink.landed().size() == 2);
        int polls = topic.polls.get();
        Await.until("the engine polled (and so looked at its completions) several times", WAIT, () -> topic.polls.get() >= polls + 5);
        assertThat(topic.commits).as("nothing committed while the first batch is out").isEmpty();
        sink.release("t-0[0,10)");
        Await.until("everything committed", WAIT, () -> topic.committed(0) == 30);
        checkCommitsFollowLandedPrefixes(sink, topic);
    }

    @Test
    void aFailedBatchIsNeverCommittedPastAndIsReadAgainFromTheCommittedOffset() {
        MemoryTopic topic = new MemoryTopic("t", 1).append(0, 20);
        RecordingSink sink = new RecordingSink().failingOnce("t-0[10,20)");
        topic.history = sink;
        engine = new IngestEngine<>(config().batchRows(10).lingerMs(60_000).build(), sink, topic::consumer, Supervision.MissingTopic.FAIL);
        Await.until("everything committed", WAIT, () -> topic.committed(0) == 20);
        assertThat(sink.landed()).containsExactly("t-0[0,10)", "t-0[10,20)");
        assertThat(sink.failed()).containsExactly("t-0[10,20)");
        assertThat(engine.supervision().restarts()).isEqualTo(1);
        assertThat(topic.commits).containsExactly(Map.of(new TopicPartition("t", 0), 10L), Map.of(new TopicPartition("t", 0), 20L));
        checkCommitsFollowLandedPrefixes(sink, topic);
        Await.until("running again", WAIT, () -> engine.supervision().state() == PipelineState.RUNNING);
    }

    @Test
    void partitionsAreCommittedIndependently() {
        MemoryTopic topic = new MemoryTopic("t", 2).append(0, 10).append(1, 10);
        RecordingSink sink = new RecordingSink().gated();
        engine = new IngestEngine<>(config().batchRows(10).lingerMs(60_000).build(), sink, topic::consumer, Supervision.MissingTopic.FAIL);
        Await.until("both batches in flight", WAIT, () -> sink.started().size() == 2);
        sink.release("t-1[0,10)");
        Await.until("partition 1 committed", WAIT, () -> topic.committed(1) == 10);
        assertThat(topic.committed(0)).as("partition 0 waits for its own batch only").isEqualTo(-1);
        sink.release("t-0[0,10)");
        Await.until("partition 0 committed", WAIT, () -> topic.committed(0) == 10);
    }

    // ---- back-pressure ---------------------------------------------------------------------------------------

    @Test
    void atMaxInFlightThePollerHoldsRecordsBackAndReadsThemAgainWithoutGapOrDuplicate() {
        MemoryTopic topic = new MemoryTopic("t", 1).append(0, 50);
        RecordingSink sink = new RecordingSink().gated();
        engine = new IngestEngine<>(config().batchRows(10).lingerMs(60_000).maxInFlight(1).build(), sink, topic::consumer,
                Supervision.MissingTopic.FAIL);
        Await.until("one batch in flight", WAIT, () -> sink.started().size() == 1);
        int polls = topic.polls.get();
        Await.until("the engine kept polling", WAIT, () -> topic.polls.get() >= polls + 3 || topic.seeks.get() > 0);
        assertThat(sink.started()).as("max.in.flight=1: no second insert while the first is out").hasSize(1);
        sink.releaseAll();
        Await.until(() -> "everything committed; history " + sink.history + ", committed " + topic.committed(0), WAIT,
                () -> topic.committed(0) == 50);
        assertThat(sink.landed()).containsExactly("t-0[0,10)", "t-0[10,20)", "t-0[20,30)", "t-0[30,40)", "t-0[40,50)");
        List<Long> rows = new ArrayList<>();
        sink.landed().forEach(b -> rows.addAll(sink.rowsOf(b)));
        assertThat(rows).as("every offset once, in order").isEqualTo(range(0, 50));
    }

    @Test
    void recordsTheConsumerReadsAgainAfterRejoiningWithTheSamePartitionsAreTakenOnce() {
        MemoryTopic topic = new MemoryTopic("t", 1).append(0, 15);
        RecordingSink sink = new RecordingSink().gated();
        topic.history = sink;
        engine = new IngestEngine<>(config().batchRows(10).lingerMs(60_000).maxInFlight(4).build(), sink, topic::consumer,
                Supervision.MissingTopic.FAIL);
        Await.until("the first batch in flight", WAIT, () -> sink.started().contains("t-0[0,10)"));
        int polls = topic.polls.get();
        Await.until("offsets 10..14 taken into the open batch", WAIT, () -> topic.polls.get() >= polls + 3);
        // its session expired (or a rebalance gave it the same partition): the consumer is back at the committed offset
        topic.rejoin = true;
        topic.append(0, 15);
        Await.until("the consumer went back", WAIT, () -> !topic.rejoin);
        sink.releaseAll();
        Await.until(() -> "everything committed; history " + sink.history, WAIT, () -> topic.committed(0) == 30);
        List<Long> rows = new ArrayList<>();
        sink.landed().forEach(b -> rows.addAll(sink.rowsOf(b)));
        rows.sort(null);
        assertThat(rows).as("every offset once; batches " + sink.landed()).isEqualTo(range(0, 30));
        checkCommitsFollowLandedPrefixes(sink, topic);
    }

    @Test
    void aRecordTheSinkRefusesIsReadAgainLater() {
        MemoryTopic topic = new MemoryTopic("t", 1).append(0, 10);
        RecordingSink sink = new RecordingSink().refusingOnce(5);
        engine = new IngestEngine<>(config().batchRows(10).lingerMs(60_000).build(), sink, topic::consumer, Supervision.MissingTopic.FAIL);
        Await.until("committed", WAIT, () -> topic.committed(0) == 10);
        assertThat(sink.refusals.get()).isEqualTo(1);
        assertThat(topic.seeks.get()).as("sought back to the refused record").isGreaterThanOrEqualTo(1);
        List<Long> rows = new ArrayList<>();
        sink.landed().forEach(b -> rows.addAll(sink.rowsOf(b)));
        assertThat(rows).isEqualTo(range(0, 10));
    }

    // ---- restart decisions -----------------------------------------------------------------------------------

    @Test
    void configurationErrorsStopTransientOnesRestartAndAMissingTopicIsWaitedForOnlyWhenAsked() {
        SluiceException.UnknownTopicException unknown = new SluiceException.UnknownTopicException("unknown topic 't'");
        assertThat(Supervision.decide(unknown, Supervision.MissingTopic.FAIL)).isEqualTo(Supervision.Decision.STOP);
        assertThat(Supervision.decide(unknown, Supervision.MissingTopic.WAIT)).isEqualTo(Supervision.Decision.WAIT_FOR_TOPIC);
        assertThat(Supervision.decide(SluiceException.InvalidConfigException.of("table", "x", "bad"), Supervision.MissingTopic.WAIT))
                .isEqualTo(Supervision.Decision.STOP);
        assertThat(Supervision.decide(new OutOfMemoryError(), Supervision.MissingTopic.WAIT)).isEqualTo(Supervision.Decision.STOP);
        assertThat(Supervision.decide(new io.sluice.ingest.IngestException("ClickHouse away", -1, false, true, null),
                Supervision.MissingTopic.FAIL)).isEqualTo(Supervision.Decision.RESTART);
        assertThat(Supervision.decide(new IllegalStateException("a batch did not land"), Supervision.MissingTopic.FAIL))
                .isEqualTo(Supervision.Decision.RESTART);
    }

    @Test
    void backoffDoublesUpToItsCapWithBoundedJitterAndResets() {
        Backoff b = new Backoff(100, 1_000);
        long[] steps = {100, 200, 400, 800, 1_000, 1_000};
        for (long step : steps) {
            assertThat(b.nextDelayMs()).isBetween(step, step + step / 4 - 1);
        }
        b.reset();
        assertThat(b.nextDelayMs()).isBetween(100L, 124L);
    }

    @Test
    void aMissingTopicIsWaitedForWithoutRestartsAndConsumedOnceCreated() {
        MemoryTopic topic = new MemoryTopic("later", 1).append(0, 10);
        topic.exists = false;
        RecordingSink sink = new RecordingSink();
        engine = new IngestEngine<>(config().topic("later").batchRows(10).retryMaxMs(50).build(), sink, topic::consumer,
                Supervision.MissingTopic.WAIT);
        Await.until("waiting for the topic", WAIT, () -> engine.supervision().state() == PipelineState.WAITING_FOR_TOPIC);
        assertThat(engine.supervision().reason()).contains("later");
        int attempts = topic.subscribes.get();
        Await.until("looked for the topic again", WAIT, () -> topic.subscribes.get() >= attempts + 2);
        assertThat(engine.supervision().restarts()).as("waiting is not a failure").isZero();
        topic.exists = true;
        Await.until("consumed once created", WAIT, () -> topic.committed(0) == 10);
        assertThat(engine.supervision().state()).isEqualTo(PipelineState.RUNNING);
    }

    @Test
    void aMissingTopicIsAConfigurationErrorByDefault() {
        MemoryTopic topic = new MemoryTopic("ghost", 1);
        topic.exists = false;
        engine = new IngestEngine<>(config().topic("ghost").build(), new RecordingSink(), topic::consumer, Supervision.MissingTopic.FAIL);
        Await.until("failed", WAIT, () -> engine.supervision().state() == PipelineState.FAILED);
        assertThat(engine.supervision().reason()).contains("ghost");
    }

    // ---- history checker and fakes ---------------------------------------------------------------------------

    /** Every commit of a partition's offset c came after every batch of it ending at or before c landed. */
    private static void checkCommitsFollowLandedPrefixes(RecordingSink sink, MemoryTopic topic) {
        List<String> history = List.copyOf(sink.history);
        for (int i = 0; i < history.size(); i++) {
            String e = history.get(i);
            if (e.startsWith("commit ")) {
                String[] p = e.substring("commit ".length()).split("=");
                String partition = p[0];
                long committed = Long.parseLong(p[1]);
                for (long from = 0; from < committed; from += 10) {
                    String batch = partition + "[" + from + "," + Math.min(committed, from + 10) + ")";
                    assertThat(history.subList(0, i)).as("%s landed before %s", batch, e).contains("landed " + batch);
                }
            }
        }
    }

    private static List<Long> range(long from, long to) {
        List<Long> out = new ArrayList<>();
        for (long o = from; o < to; o++) {
            out.add(o);
        }
        return out;
    }

    private static IngestConfig.Builder config() {
        return IngestConfig.builder("unit").clickHouseUrl("http://127.0.0.1:1").table("db.t").topic("t")
                .retryInitialMs(5).retryMaxMs(20).closeTimeoutMs(1_000);
    }

    /** A sink that records its batches' rows, what landed and failed, in one history with the commits. */
    static final class RecordingSink implements BatchSink<List<Long>> {
        final List<String> history = new CopyOnWriteArrayList<>();
        private final Map<String, List<Long>> rows = new ConcurrentHashMap<>();
        private final Map<String, CompletableFuture<Void>> gates = new ConcurrentHashMap<>();
        private final Set<String> failOnce = ConcurrentHashMap.newKeySet();
        private final Set<Long> refuseOnce = ConcurrentHashMap.newKeySet();
        final AtomicInteger refusals = new AtomicInteger();
        private volatile boolean gated;
        private volatile boolean open = true;

        RecordingSink gated() {
            gated = true;
            return this;
        }

        RecordingSink failingOnce(String batch) {
            failOnce.add(batch);
            return this;
        }

        RecordingSink refusingOnce(long offset) {
            refuseOnce.add(offset);
            return this;
        }

        void release(String batch) {
            gate(batch).complete(null);
        }

        void releaseAll() {
            gated = false;
            gates.values().forEach(g -> g.complete(null));
        }

        private CompletableFuture<Void> gate(String batch) {
            return gates.computeIfAbsent(batch, b -> new CompletableFuture<>());
        }

        List<String> started() {
            return events("started ");
        }

        List<String> landed() {
            return events("landed ");
        }

        List<String> failed() {
            return events("failed ");
        }

        List<Long> rowsOf(String batch) {
            return rows.get(batch);
        }

        private List<String> events(String prefix) {
            return history.stream().filter(e -> e.startsWith(prefix)).map(e -> e.substring(prefix.length())).toList();
        }

        @Override
        public void open() {
        }

        @Override
        public Guarantee guarantee() {
            return Guarantee.AT_LEAST_ONCE;
        }

        @Override
        public Map<String, Number> metrics() {
            return Map.of("batches", landed().size());
        }

        @Override
        public String lastFailure() {
            return null;
        }

        @Override
        public List<Long> newBatch(int rowsHint, int bytesHint) {
            return new ArrayList<>();
        }

        @Override
        public int bytes(List<Long> batch) {
            return batch.size() * bytesPerRow;
        }

        int bytesPerRow = 100;

        @Override
        public int rows(List<Long> batch) {
            return batch.size();
        }

        @Override
        public boolean add(List<Long> batch, ConsumerRecord r) {
            bytesPerRow = r.value().length;
            if (refuseOnce.remove(r.offset())) {
                refusals.incrementAndGet();
                return false;
            }
            batch.add(r.offset());
            return true;
        }

        @Override
        public void insert(TopicPartition partition, long from, long to, List<Long> batch, BooleanSupplier abandoned) throws Exception {
            String id = partition.topic() + "-" + partition.partition() + "[" + from + "," + to + ")";
            history.add("started " + id);
            if (gated) {
                CompletableFuture<Void> g = gate(id);
                while (!g.isDone() && gated) {
                    if (abandoned.getAsBoolean() || !open) {
                        throw new IllegalStateException("abandoned");
                    }
                    try {
                        g.get(10, TimeUnit.MILLISECONDS);
                    } catch (java.util.concurrent.TimeoutException e) {
                        // still gated
                    }
                }
            }
            if (failOnce.remove(id)) {
                history.add("failed " + id);
                throw new IllegalStateException("injected failure of " + id);
            }
            rows.put(id, List.copyOf(batch));
            history.add("landed " + id);
        }

        @Override
        public void close() {
            open = false;
        }
    }

    /** An in-memory topic: partitions of events, committed offsets, and counters of what its consumers did. */
    static final class MemoryTopic {
        final String name;
        final List<List<byte[]>> partitions = new ArrayList<>();
        final Map<Integer, Long> committed = new ConcurrentHashMap<>();
        final List<Map<TopicPartition, Long>> commits = new CopyOnWriteArrayList<>();
        final AtomicInteger polls = new AtomicInteger();
        final AtomicInteger seeks = new AtomicInteger();
        final AtomicInteger subscribes = new AtomicInteger();
        volatile boolean exists = true;
        /** Set: the next poll first moves every position back to the committed offset, as a consumer that joined again. */
        volatile boolean rejoin;
        /** Where commits are recorded beside what landed (for the history checks), or null. */
        volatile RecordingSink history;

        MemoryTopic(String name, int partitions) {
            this.name = name;
            for (int i = 0; i < partitions; i++) {
                this.partitions.add(new CopyOnWriteArrayList<>());
            }
        }

        MemoryTopic append(int partition, int events) {
            return append(partition, events, 100);
        }

        MemoryTopic append(int partition, int events, int bytes) {
            for (int i = 0; i < events; i++) {
                byte[] v = new byte[bytes];
                byte[] n = ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8);
                System.arraycopy(n, 0, v, 0, Math.min(n.length, bytes));
                partitions.get(partition).add(v);
            }
            return this;
        }

        long committed(int partition) {
            return committed.getOrDefault(partition, -1L);
        }

        Consumer consumer(ConsumerConfig config) {
            return new MemoryConsumer(this, config);
        }
    }

    /** One group member that is assigned every partition of its topic; reads from the committed offsets. */
    static final class MemoryConsumer implements Consumer {
        private final MemoryTopic topic;
        private final ConsumerConfig config;
        private final Map<TopicPartition, Long> positions = new HashMap<>();

        MemoryConsumer(MemoryTopic topic, ConsumerConfig config) {
            this.topic = topic;
            this.config = config;
        }

        @Override
        public void subscribe(String name) {
            topic.subscribes.incrementAndGet();
            if (!topic.exists || !topic.name.equals(name)) {
                throw new SluiceException.UnknownTopicException("unknown topic '" + name + "'");
            }
            for (int p = 0; p < topic.partitions.size(); p++) {
                positions.put(new TopicPartition(name, p), Math.max(0, topic.committed(p)));
            }
        }

        @Override
        public void assign(Set<TopicPartition> partitions) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Set<TopicPartition> assignment() {
            return Set.copyOf(positions.keySet());
        }

        @Override
        public void seek(TopicPartition partition, long offset) {
            topic.seeks.incrementAndGet();
            positions.put(partition, offset);
        }

        @Override
        public void seekToBeginning(Set<TopicPartition> partitions) {
            partitions.forEach(tp -> positions.put(tp, 0L));
        }

        @Override
        public void seekToEnd(Set<TopicPartition> partitions) {
            partitions.forEach(tp -> positions.put(tp, (long) topic.partitions.get(tp.partition()).size()));
        }

        @Override
        public void seekToTimestamp(TopicPartition partition, long epochMillis) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long position(TopicPartition partition) {
            return positions.get(partition);
        }

        /** Returns what is there at once; when nothing is, parks for at most a millisecond (a poll's wait, not a test's). */
        @Override
        public List<ConsumerRecord> poll(Duration timeout) {
            topic.polls.incrementAndGet();
            if (topic.rejoin) {
                positions.replaceAll((tp, o) -> Math.max(0, topic.committed(tp.partition())));
                topic.rejoin = false;
            }
            List<ConsumerRecord> out = new ArrayList<>();
            for (Map.Entry<TopicPartition, Long> e : positions.entrySet()) {
                List<byte[]> events = topic.partitions.get(e.getKey().partition());
                long o = e.getValue();
                while (o < events.size() && out.size() < config.maxPollRecords()) {
                    out.add(new ConsumerRecord(topic.name, e.getKey().partition(), o, 0L, null, events.get((int) o), List.of()));
                    o++;
                }
                e.setValue(o);
            }
            if (out.isEmpty()) {
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
            }
            return out;
        }

        @Override
        public void commitSync() {
            commitSync(Map.copyOf(positions));
        }

        @Override
        public void commitSync(Map<TopicPartition, Long> offsets) {
            topic.commits.add(Map.copyOf(offsets));
            for (Map.Entry<TopicPartition, Long> e : offsets.entrySet()) {
                long before = topic.committed(e.getKey().partition());
                assertThat(e.getValue()).as("a commit never goes backwards").isGreaterThanOrEqualTo(before);
                topic.committed.put(e.getKey().partition(), e.getValue());
                RecordingSink h = topic.history;
                if (h != null) {
                    h.history.add("commit " + e.getKey().topic() + "-" + e.getKey().partition() + "=" + e.getValue());
                }
            }
        }

        @Override
        public long skippedByRetention() {
            return 0;
        }

        @Override
        public Optional<ConsumerGroups.Membership> groupMembership() {
            return Optional.empty();
        }

        @Override
        public OptionalLong committed(TopicPartition partition) {
            long c = topic.committed(partition.partition());
            return c < 0 ? OptionalLong.empty() : OptionalLong.of(c);
        }

        @Override
        public void close() {
        }
    }
}
