package io.sluice.ingest.internal;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.TopicPartition;
import io.sluice.ingest.Guarantee;
import io.sluice.ingest.IngestConfig;
import io.sluice.redis.DeadLetterStream;
import io.sluice.redis.GroupReader;
import io.sluice.redis.StreamEntry;
import io.sluice.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The one engine over a Redis stream's consumer group ({@link StreamGroupConsumer}), without any server: an
 * in-memory group (its pending list, delivery counts, idle entries of a dead member) and a sink over the member's
 * {@link EntryLedger} that records a history of what landed beside the group's XACKs. The properties: an entry is
 * acknowledged only after its batch and every earlier one landed, in stream order, exactly once; a batch is a run of
 * packed entries cut at {@code batch.rows} events, named by its first and last entry id; a failed batch is re-read
 * from the member's own pending entries; a dead member's idle entries are taken over; entries held are kept alive;
 * at capacity nothing is read from the group twice.
 */
class StreamGroupEngineTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final long CLAIM_IDLE_MS = 100;
    private IngestEngine<?> engine;

    @AfterEach
    void close() {
        if (engine != null) {
            engine.close();
        }
    }

    @Test
    void entriesAreAcknowledgedOnlyAfterTheirBatchAndEveryEarlierOneLandedInStreamOrder() {
        MemoryGroup group = new MemoryGroup().append(12, 3);
        LedgerSink sink = new LedgerSink(group).gated();
        engine = start(group, sink, config().batchRows(9).maxInFlight(4));
        Await.until("four batches in flight", WAIT, () -> sink.started().size() == 4);
        assertThat(sink.started()).as("batches of 3 entries (9 events), named by their first and last entry id")
                .containsExactlyInAnyOrder(batch(group, 0, 2), batch(group, 3, 5), batch(group, 6, 8), batch(group, 9, 11));
        sink.release(batch(group, 9, 11));
        sink.release(batch(group, 6, 8));
        sink.release(batch(group, 3, 5));
        Await.until("three later batches landed", WAIT, () -> sink.landed().size() == 3);
        int polls = group.polls();
        Await.until("the engine polled several times since", WAIT, () -> group.polls() >= polls + 5);
        // every redis.claim.idle.ms / 4 the member re-claims what it holds (XCLAIM JUSTID), the first batch's entries too
        Await.until("the entries in flight kept this member's", WAIT, () -> group.history.contains("keep " + group.id(0)));
        assertThat(group.acknowledged()).as("nothing acknowledged while the first batch is out").isEmpty();
        sink.release(batch(group, 0, 2));
        Await.until("every entry acknowledged", WAIT, () -> group.acknowledged().size() == 12);
        assertThat(group.acknowledged()).as("in stream order, once each").isEqualTo(group.ids(0, 12));
        checkAcknowledgementsFollowLandedBatches(group);
    }

    @Test
    void aBatchThatFailedIsReadAgainFromTheMembersOwnPendingEntriesAndAcknowledgedOnce() {
        MemoryGroup group = new MemoryGroup().append(6, 3);
        LedgerSink sink = new LedgerSink(group).failingOnce(batch(group, 3, 5));
        engine = start(group, sink, config().batchRows(9));
        Await.until("every entry acknowledged", WAIT, () -> group.acknowledged().size() == 6);
        assertThat(sink.failed()).containsExactly(batch(group, 3, 5));
        assertThat(sink.landed()).containsExactly(batch(group, 0, 2), batch(group, 3, 5));
        assertThat(sink.redelivered).as("the retry came from the member's pending list").containsExactlyInAnyOrderElementsOf(group.ids(3, 6));
        assertThat(group.acknowledged()).isEqualTo(group.ids(0, 6));
        assertThat(group.deliveredTwice()).as("no new read delivered an entry twice").isEmpty();
        assertThat(engine.supervision().restarts()).isEqualTo(1);
        checkAcknowledgementsFollowLandedBatches(group);
    }

    @Test
    void idleEntriesOfADeadMemberAreTakenOverMarkedRedeliveredAndAcknowledgedOnce() {
        MemoryGroup group = new MemoryGroup().append(12, 3);
        group.deliverTo("dead-worker", 6, true);
        LedgerSink sink = new LedgerSink(group);
        engine = start(group, sink, config().batchRows(9).lingerMs(10));
        Await.until("every entry acknowledged", WAIT, () -> group.acknowledged().size() == 12);
        assertThat(sink.redelivered).as("taken over").containsExactlyInAnyOrderElementsOf(group.ids(0, 6));
        assertThat(group.acknowledged()).containsExactlyInAnyOrderElementsOf(group.ids(0, 12));
        assertThat(group.acknowledged()).doesNotHaveDuplicates();
        checkAcknowledgementsFollowLandedBatches(group);
    }

    @Test
    void atCapacityEntriesAreHeldAndHandedOutAgainNeverReadFromTheGroupTwice() {
        MemoryGroup group = new MemoryGroup().append(30, 3);
        LedgerSink sink = new LedgerSink(group).gated();
        engine = start(group, sink, config().batchRows(9).maxInFlight(1));
        Await.until("one batch in flight", WAIT, () -> sink.started().size() == 1);
        int polls = group.polls();
        Await.until("the engine kept polling", WAIT, () -> group.polls() >= polls + 5);
        assertThat(sink.started()).as("max.in.flight=1").hasSize(1);
        assertThat(group.delivered()).as("held entries are not read again, nor more than a batch and a poll ahead").isLessThan(30);
        sink.releaseAll();
        Await.until("every entry acknowledged", WAIT, () -> group.acknowledged().size() == 30);
        assertThat(group.acknowledged()).isEqualTo(group.ids(0, 30));
        List<String> landedEntries = new ArrayList<>();
        sink.landed().forEach(b -> landedEntries.addAll(sink.entriesOf(b)));
        assertThat(landedEntries).as("every entry landed once, in order").isEqualTo(group.ids(0, 30));
        assertThat(group.deliveredTwice()).isEmpty();
    }

    @Test
    void aMemberClosedRightAfterItsLastAcknowledgementStillTrimsTheStream() throws InterruptedException {
        MemoryGroup group = new MemoryGroup().append(3, 3);
        LedgerSink sink = new LedgerSink(group).gated();
        engine = start(group, sink, config().batchRows(9));
        Await.until("the one batch in flight", WAIT, () -> sink.started().size() == 1);
        Thread release = new Thread(() -> {
            java.util.concurrent.locks.LockSupport.parkNanos(200_000_000L);
            sink.releaseAll();
        }, "test-release");
        release.start();
        engine.close(); // lands and acknowledges the batch in flight; no poll (and no idle trim) comes after that
        release.join();
        List<String> history = List.copyOf(group.history);
        assertThat(group.acknowledged()).isEqualTo(group.ids(0, 3));
        assertThat(history.lastIndexOf("trim now")).as("a trim after the last XACK: %s", history)
                .isGreaterThan(history.lastIndexOf("ack " + group.id(2)));
    }

    @Test
    void aMemberWhoseRedisIsAwaySendsNoTrimWhenItCloses() {
        MemoryGroup group = new MemoryGroup().append(3, 3);
        LedgerSink sink = new LedgerSink(group);
        engine = start(group, sink, config().batchRows(9));
        Await.until("every entry acknowledged", WAIT, () -> group.acknowledged().size() == 3);
        group.away = true;
        Await.until("a read failed", WAIT, () -> group.history.contains("read failed"));
        engine.close(); // a command to a server that is away would hold close() up (no command timeout on reads)
        assertThat(group.history).as("no trim once Redis stopped answering").doesNotContain("trim now");
    }

    // ---- history checker and fakes ---------------------------------------------------------------------------

    /** Every XACK of an entry came after the batch holding it landed (order: the tests compare the XACKs' order). */
    private static void checkAcknowledgementsFollowLandedBatches(MemoryGroup group) {
        List<String> history = List.copyOf(group.history);
        for (int i = 0; i < history.size(); i++) {
            if (history.get(i).startsWith("ack ")) {
                String id = history.get(i).substring(4);
                assertThat(history.subList(0, i).stream().anyMatch(e -> e.startsWith("landed ") && e.contains(" " + id + " ")))
                        .as("entry %s landed before its XACK", id).isTrue();
            }
        }
    }

    private static String batch(MemoryGroup group, int first, int last) {
        return group.id(first) + ".." + group.id(last);
    }

    private IngestEngine<?> start(MemoryGroup group, LedgerSink sink, IngestConfig.Builder config) {
        IngestConfig c = config.build();
        StreamGroupConsumer.Settings settings = new StreamGroupConsumer.Settings(c.batchRows(), CLAIM_IDLE_MS, 5, true,
                c.retryInitialMs(), c.retryMaxMs());
        return new IngestEngine<>(c, "sluice-ingest-unit-drainer-0", sink,
                cc -> new StreamGroupConsumer(group.member("m"), sink.ledger, settings, null, n -> { }, n -> { }, () -> false),
                Supervision.MissingTopic.FAIL, CLAIM_IDLE_MS / 4);
    }

    private static IngestConfig.Builder config() {
        return IngestConfig.builder("unit").clickHouseUrl("http://127.0.0.1:1").table("db.t").topic("t")
                .lingerMs(60_000).retryInitialMs(5).retryMaxMs(20).closeTimeoutMs(1_000);
    }

    /** A sink over the member's ledger: records each batch's entries and whether they were redelivered. */
    static final class LedgerSink implements BatchSink<List<EntryLedger.Held>> {
        final EntryLedger ledger = new EntryLedger("s");
        final Set<String> redelivered = ConcurrentHashMap.newKeySet();
        private final MemoryGroup group;
        private final Map<String, List<String>> entries = new ConcurrentHashMap<>();
        private final Map<String, CompletableFuture<Void>> gates = new ConcurrentHashMap<>();
        private final Set<String> failOnce = ConcurrentHashMap.newKeySet();
        private volatile boolean gated;

        LedgerSink(MemoryGroup group) {
            this.group = group;
        }

        LedgerSink gated() {
            gated = true;
            return this;
        }

        LedgerSink failingOnce(String batch) {
            failOnce.add(batch);
            return this;
        }

        void release(String batch) {
            gates.computeIfAbsent(batch, b -> new CompletableFuture<>()).complete(null);
        }

        void releaseAll() {
            gated = false;
            gates.values().forEach(g -> g.complete(null));
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

        List<String> entriesOf(String batch) {
            return entries.get(batch);
        }

        private List<String> events(String prefix) {
            return group.history.stream().filter(e -> e.startsWith(prefix)).map(e -> e.substring(prefix.length()).split(" ")[0]).toList();
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
            return Map.of();
        }

        @Override
        public String lastFailure() {
            return null;
        }

        @Override
        public List<EntryLedger.Held> newBatch(int rowsHint, int bytesHint) {
            return new ArrayList<>();
        }

        @Override
        public int bytes(List<EntryLedger.Held> batch) {
            return batch.size();
        }

        @Override
        public int rows(List<EntryLedger.Held> batch) {
            return batch.stream().mapToInt(h -> h.entry().events().size()).sum();
        }

        @Override
        public boolean add(List<EntryLedger.Held> batch, ConsumerRecord record) {
            batch.add(ledger.get(record.offset()));
            return true;
        }

        @Override
        public void insert(TopicPartition partition, long from, long to, List<EntryLedger.Held> batch, BooleanSupplier abandoned) {
            List<String> ids = batch.stream().map(h -> h.entry().id()).toList();
            String id = ids.get(0) + ".." + ids.get(ids.size() - 1);
            group.history.add("started " + id);
            if (gated) {
                CompletableFuture<Void> g = gates.computeIfAbsent(id, b -> new CompletableFuture<>());
                while (!g.isDone() && gated) {
                    if (abandoned.getAsBoolean()) {
                        throw new IllegalStateException("abandoned");
                    }
                    try {
                        g.get(10, TimeUnit.MILLISECONDS);
                    } catch (Exception e) {
                        // still gated
                    }
                }
            }
            if (failOnce.remove(id)) {
                group.history.add("failed " + id);
                throw new IllegalStateException("injected failure of " + id);
            }
            batch.stream().filter(EntryLedger.Held::redelivered).forEach(h -> redelivered.add(h.entry().id()));
            entries.put(id, ids);
            group.history.add("landed " + id + " " + String.join(" ", ids) + " ");
        }

        @Override
        public void close() {
        }
    }

    /**
     * A stream's consumer group in memory: entries with sparse ids, each holding packed events; new reads, the pending
     * list per member with delivery counts, idle entries (of a dead member) to claim, XACK and XCLAIM JUSTID in a history.
     */
    static final class MemoryGroup {
        final List<String> history = new CopyOnWriteArrayList<>();
        private final List<StreamEntry> entries = new ArrayList<>();
        private final Map<String, String> pending = new LinkedHashMap<>(); // id -> member
        private final Map<String, Integer> deliveries = new HashMap<>();
        private final Set<String> idle = ConcurrentHashMap.newKeySet();
        private final List<String> deliveredTwice = new CopyOnWriteArrayList<>();
        private int next;
        private int polls;
        /** Redis away: every read fails */
        volatile boolean away;

        synchronized MemoryGroup append(int count, int eventsPerEntry) {
            for (int i = 0; i < count; i++) {
                entries.add(EntryLedgerTest.entry(EntryLedgerTest.id(entries.size()), eventsPerEntry));
            }
            return this;
        }

        /** The next {@code count} entries delivered to another member (idle: as if it died long ago). */
        synchronized void deliverTo(String member, int count, boolean idleNow) {
            for (int i = 0; i < count; i++) {
                String id = entries.get(next++).id();
                pending.put(id, member);
                deliveries.put(id, 1);
                if (idleNow) {
                    idle.add(id);
                }
            }
        }

        String id(int i) {
            return EntryLedgerTest.id(i);
        }

        List<String> ids(int from, int to) {
            List<String> out = new ArrayList<>();
            for (int i = from; i < to; i++) {
                out.add(id(i));
            }
            return out;
        }

        synchronized int size() {
            return entries.size();
        }

        synchronized int polls() {
            return polls;
        }

        synchronized int delivered() {
            return next;
        }

        List<String> deliveredTwice() {
            return deliveredTwice;
        }

        List<String> acknowledged() {
            return history.stream().filter(e -> e.startsWith("ack ")).map(e -> e.substring(4)).toList();
        }

        StreamGroupConsumer.Group member(String name) {
            MemoryGroup g = this;
            return new StreamGroupConsumer.Group() {
                @Override
                public String member() {
                    return name;
                }

                @Override
                public void open() {
                    synchronized (g) {
                        polls++; // the member opens its reader on every poll
                    }
                }

                @Override
                public List<StreamEntry> read(int maxEntries, long blockMs, long lingerMs, BooleanSupplier running) {
                    if (away) {
                        history.add("read failed");
                        throw new io.sluice.redis.RedisStreamException("Redis: connection refused (test)", null);
                    }
                    List<StreamEntry> out = new ArrayList<>();
                    synchronized (g) {
                        while (next < entries.size() && out.size() < maxEntries) {
                            StreamEntry e = entries.get(next++);
                            if (deliveries.merge(e.id(), 1, Integer::sum) > 1) {
                                deliveredTwice.add(e.id());
                            }
                            pending.put(e.id(), name);
                            out.add(e);
                        }
                    }
                    if (out.isEmpty()) {
                        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L); // a read's block, not a test's wait
                    }
                    return out;
                }

                @Override
                public List<StreamEntry> readOwnPending(String after, int maxEntries) {
                    synchronized (g) {
                        int from = "0".equals(after) ? 0 : indexOf(after) + 1;
                        List<StreamEntry> out = new ArrayList<>();
                        for (int i = from; i < next && out.size() < maxEntries; i++) {
                            StreamEntry e = entries.get(i);
                            if (name.equals(pending.get(e.id()))) {
                                out.add(e);
                            }
                        }
                        return out;
                    }
                }

                @Override
                public GroupReader.Claimed claimIdle(String cursor, long minIdleMs, int count, int maxDeliveries,
                                                     DeadLetterStream deadLetters) {
                    synchronized (g) {
                        List<StreamEntry> out = new ArrayList<>();
                        for (StreamEntry e : entries) {
                            if (out.size() < count && idle.remove(e.id()) && pending.containsKey(e.id())) {
                                pending.put(e.id(), name);
                                long n = deliveries.merge(e.id(), 1, Integer::sum);
                                out.add(new StreamEntry(e.id(), e.events(), n));
                            }
                        }
                        return new GroupReader.Claimed("0-0", out);
                    }
                }

                @Override
                public void keep(Collection<String> ids) {
                    ids.forEach(id -> history.add("keep " + id));
                }

                @Override
                public void acknowledge(String... ids) {
                    synchronized (g) {
                        for (String id : ids) {
                            pending.remove(id);
                            history.add("ack " + id);
                        }
                    }
                }

                @Override
                public void trimAcknowledged() {
                    history.add("trim");
                }

                @Override
                public void trimAcknowledgedNow() {
                    history.add("trim now");
                }

                @Override
                public void close() {
                }
            };
        }

        private int indexOf(String id) {
            for (int i = 0; i < entries.size(); i++) {
                if (entries.get(i).id().equals(id)) {
                    return i;
                }
            }
            return -1;
        }
    }
}
