package io.sluice.ingest;

import io.lettuce.core.Consumer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.XClaimArgs;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.StreamMessage;
import io.sluice.core.SluiceException.BackPressureException;
import io.sluice.testkit.Await;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.RedisServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static io.sluice.ingest.Tables.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** ClickHouse down, Redis restarted, a dead worker, a poison entry: what each strategy promises still holds. */
@ExtendWith(ServicesExtension.class)
class FaultsTest {
    /**
     * The takeover timeout of the worker-pool tests: far above anything a live worker's INSERT takes, even on a
     * loaded machine, so only the dead worker's entries are taken over. They are made that old by the dead worker's
     * last XCLAIM (IDLE, see {@link #died}), not by waiting: a short timeout (it was 300 ms) let the other live worker
     * take over a batch whose INSERT was still running on a busy machine, and the takeover counts went wrong.
     */
    static final long CLAIM_IDLE_MS = 60_000;
    static String db;

    /**
     * The dead worker's pending entries last delivered {@code 10 × CLAIM_IDLE_MS} ago: XCLAIM to the same consumer with
     * IDLE sets their idle time and, with JUSTID, leaves their delivery counts as they are.
     */
    @SuppressWarnings("unchecked") // Lettuce's generic varargs
    static void died(RedisCommands<String, String> r, String stream, String deadWorker, List<StreamMessage<String, String>> taken) {
        r.xclaim(stream, Consumer.from("sluice-ingest", deadWorker), XClaimArgs.Builder.minIdleTime(0).idle(10 * CLAIM_IDLE_MS).justid(),
                taken.stream().map(StreamMessage::getId).toArray(String[]::new));
    }

    @BeforeAll
    static void database(ClickHouseServer clickHouse) {
        db = clickHouse.createDatabase("faults");
    }

    @Test
    void coalescingBackPressuresWhileClickHouseIsDownAndLandsEverythingWhenItReturns(ClickHouseServer clickHouse) throws Exception {
        assumeTrue(clickHouse.isPrivate(), "needs a private ClickHouse to stop");
        String t = Tables.createEvents(clickHouse, db, "coalescing_outage");
        int n = 20_000;
        int backPressured = 0;
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        try (EventSink sink = EventSink.open(Tables.config(clickHouse, t, Strategy.COALESCING).batchRows(1_000)
                .lingerMs(10).bufferEvents(3_000).blockMs(50).build())) {
            for (int i = 0; i < n; i++) {
                if (i == 2_000) {
                    clickHouse.stop();
                }
                while (true) {
                    try {
                        writes.add(sink.write(event(i)));
                        break;
                    } catch (BackPressureException e) {
                        if (backPressured++ == 0) {
                            clickHouse.start(); // producers felt the bound: bring ClickHouse back
                        }
                    }
                }
            }
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            assertThat(sink.metrics().get("retries").longValue()).isPositive();
        }
        assertThat(backPressured).isPositive();
        assertThat(Tables.contentSummary(clickHouse, t)).isEqualTo(Tables.expectedSummary(n));
    }

    @Test
    @SuppressWarnings("unchecked") // Lettuce's generic varargs
    void workerPoolTakesOverADeadWorkersEntriesAndDeadLettersAPoisonEntry(ClickHouseServer clickHouse, RedisServer redis) {
        String t = Tables.createEvents(clickHouse, db, "takeover");
        String stream = "it:takeover:" + System.nanoTime();
        String poisonId;
        RedisClient client = RedisClient.create(redis.url());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            RedisCommands<String, String> r = c.sync();
            r.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "sluice-ingest", new XGroupCreateArgs().mkstream(true));
            for (int i = 0; i < 1_000; i++) {
                r.xadd(stream, "e", new String(event(i)));
            }
            // a worker that read everything and died without acknowledging
            List<StreamMessage<String, String>> taken = r.xreadgroup(Consumer.from("sluice-ingest", "dead-worker"),
                    XReadArgs.Builder.count(1_000), XReadArgs.StreamOffset.lastConsumed(stream));
            assertThat(taken).hasSize(1_000);
            poisonId = taken.get(5).getId();
            for (int k = 0; k < 6; k++) { // entry 5 keeps being delivered and never acknowledged
                r.xclaim(stream, Consumer.from("sluice-ingest", "dead-worker-" + k), XClaimArgs.Builder.minIdleTime(0), poisonId);
            }
            died(r, stream, "dead-worker-5", taken);
        }
        try (EventSink sink = EventSink.open(Tables.config(clickHouse, t, Strategy.WORKER_POOL).redisUrl(redis.url())
                .redisStream(stream).workers(2).redisClaimIdleMs(CLAIM_IDLE_MS).redisMaxDeliveries(3).build())) {
            Tables.awaitRows(clickHouse, t, 999, Duration.ofSeconds(30));
            Await.until("stream emptied", Duration.ofSeconds(30), () -> redis.commandLong("XLEN", stream) == 0);
            assertThat(sink.metrics().get("dead_lettered").longValue()).isEqualTo(1);
        } finally {
            client.shutdown();
        }
        assertThat(clickHouse.queryLong("SELECT count() FROM " + t)).isEqualTo(999);
        assertThat(clickHouse.queryLong("SELECT uniqExact(id) FROM " + t)).isEqualTo(999);
        assertThat(clickHouse.queryLong("SELECT countIf(id = 5) FROM " + t)).isZero();
        assertThat(redis.commandLong("XLEN", stream + ":dead-letters")).isEqualTo(1);
        assertThat(redis.command("XRANGE", stream + ":dead-letters", "-", "+")).startsWith("*1");
    }

    @Test
    void workerPoolReportsWriteErrorsWhileRedisRestartsAndLandsEveryAcknowledgedEventOnce(ClickHouseServer clickHouse,
                                                                                        RedisServer redis) throws Exception {
        assumeTrue(redis.isPrivate(), "needs a private Redis to restart");
        String t = Tables.createEvents(clickHouse, db, "redis_restart");
        String stream = "it:restart:" + System.nanoTime();
        int n = 20_000;
        Set<Long> acknowledged = ConcurrentHashMap.newKeySet();
        int failedWrites = 0;
        try (EventSink sink = EventSink.open(Tables.config(clickHouse, t, Strategy.WORKER_POOL).redisUrl(redis.url())
                .redisStream(stream).workers(2).batchRows(2_000).lingerMs(10).build())) {
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if (i == n / 2) {
                    CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).exceptionally(e -> null).get(30, TimeUnit.SECONDS);
                    redis.stop();
                    // while Redis is down, writes fail (reported) instead of being silently buffered
                    for (int k = 0; k < 3; k++) {
                        CompletableFuture<Void> f = sink.write(event(n + k));
                        assertThat(f).failsWithin(Duration.ofSeconds(10));
                        failedWrites++;
                    }
                    redis.start();
                    // Lettuce reconnects in the background (commands are rejected until then, not queued): as a writer
                    // would, retry until Redis takes a write again, each attempt a new event so none can land twice
                    java.util.concurrent.atomic.AtomicInteger probe = new java.util.concurrent.atomic.AtomicInteger(n + 3);
                    Await.until("a write taken after the restart", Duration.ofSeconds(30), () -> {
                        try {
                            sink.write(event(probe.getAndIncrement())).get(10, TimeUnit.SECONDS);
                            return true;
                        } catch (Exception e) {
                            return false; // still reconnecting: reported, not acknowledged
                        }
                    });
                }
                long id = i;
                CompletableFuture<Void> f = sink.write(event(i));
                writes.add(f.thenRun(() -> acknowledged.add(id)));
            }
            for (CompletableFuture<Void> w : writes) {
                try {
                    w.get(30, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    failedWrites++; // reported to the writer: not acknowledged
                }
            }
            assertThat(acknowledged.size()).isGreaterThan(n / 2);
            Tables.awaitRows(clickHouse, t, acknowledged.size(), Duration.ofSeconds(60));
            Await.until("stream emptied", Duration.ofSeconds(30), () -> redis.commandLong("XLEN", stream) == 0);
        }
        assertThat(failedWrites).isGreaterThanOrEqualTo(3);
        assertThat(Tables.landedIds(clickHouse, t)).containsAll(acknowledged); // none twice, nothing acknowledged lost
    }

    @Test
    @SuppressWarnings("unchecked") // Lettuce's generic varargs
    void rowsOfATakenOverEntryThatAlreadyLandedAreNotInsertedAgain(ClickHouseServer clickHouse, RedisServer redis) {
        String t = db + ".takeover_landed";
        clickHouse.execute("CREATE TABLE " + t + " (id UInt64, name String, value Int64, _sluice_entry String,"
                + " _sluice_index UInt32) ENGINE = MergeTree ORDER BY id");
        String stream = "it:landed:" + System.nanoTime();
        RedisClient client = RedisClient.create(redis.url());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            RedisCommands<String, String> r = c.sync();
            r.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "sluice-ingest", new XGroupCreateArgs().mkstream(true));
            for (int i = 0; i < 1_000; i++) {
                r.xadd(stream, "e", new String(event(i)));
            }
            List<StreamMessage<String, String>> taken = r.xreadgroup(Consumer.from("sluice-ingest", "dead-worker"),
                    XReadArgs.Builder.count(1_000), XReadArgs.StreamOffset.lastConsumed(stream));
            // the dead worker had inserted the first 300 rows but died before XACK
            StringBuilder rows = new StringBuilder();
            for (int i = 0; i < 300; i++) {
                rows.append(i == 0 ? "" : ",").append("(").append(i).append(",'n").append(i).append("',").append(3 * i)
                        .append(",'").append(taken.get(i).getId()).append("',0)");
            }
            clickHouse.execute("INSERT INTO " + t + " VALUES " + rows);
            died(r, stream, "dead-worker", taken);
        }
        try (EventSink sink = EventSink.open(Tables.config(clickHouse, t, Strategy.WORKER_POOL).redisUrl(redis.url())
                .redisStream(stream).workers(2).redisClaimIdleMs(CLAIM_IDLE_MS).build())) {
            Await.until("stream emptied", Duration.ofSeconds(30), () -> redis.commandLong("XLEN", stream) == 0);
            // exactly the 300 landed rows: no live worker's entry idles CLAIM_IDLE_MS, so none is taken over twice
            assertThat(sink.metrics().get("duplicates_skipped").longValue()).isEqualTo(300);
        } finally {
            client.shutdown();
        }
        assertThat(Tables.contentSummary(clickHouse, t)).isEqualTo(Tables.expectedSummary(1_000));
    }

    /**
     * ClickHouse down, the stream at its bound (redis.max.pending written and not landed; XADDs in flight count) and
     * the writer waiting for room: close() returns after its close.timeout.ms instead of waiting for room forever,
     * every write is answered
     * (the ones Redis took succeed, the ones still waiting fail, naming the bound), and nothing Redis took is lost: a
     * sink opened later under the same member lands exactly those.
     */
    @Test
    void aRedisStreamSinkClosedWhileClickHouseIsDownAndTheStreamFullAnswersEveryWriteAndLosesNothing(
            ClickHouseServer clickHouse, RedisServer redis) throws Exception {
        assumeTrue(clickHouse.isPrivate(), "needs a private ClickHouse to stop");
        String t = Tables.createEvents(clickHouse, db, "redis_stream_full_at_close");
        IngestConfig config = Tables.config(clickHouse, t, Strategy.REDIS_STREAM).redisUrl(redis.url())
                .redisStream("it:full:" + System.nanoTime()).batchRows(100).lingerMs(5).redisMaxPending(300)
                .bufferEvents(2_000).closeTimeoutMs(2_000).build();
        int n = 1_000;
        List<CompletableFuture<Void>> writes = new ArrayList<>(n);
        EventSink sink = EventSink.open(config);
        clickHouse.stop();
        try {
            for (int i = 0; i < n; i++) {
                writes.add(sink.write(event(i)));
            }
            Await.until("the stream at its bound", Duration.ofSeconds(30),
                    () -> sink.metrics().get("events_accepted").longValue() >= 300);
            Thread closing = new Thread(sink::close, "test-close");
            closing.start();
            closing.join(60_000);
            assertThat(closing.isAlive()).as("close() still waiting for room in the stream after 60 s").isFalse();
        } finally {
            clickHouse.start();
        }
        Set<Long> written = new HashSet<>();
        int refused = 0;
        for (int i = 0; i < n; i++) {
            CompletableFuture<Void> w = writes.get(i);
            assertThat(w).as("write " + i + " answered").isDone();
            if (!w.isCompletedExceptionally()) {
                written.add((long) i);
            } else {
                refused++;
                assertThat(w).failsWithin(Duration.ZERO).withThrowableThat().withMessageContaining("redis.max.pending");
            }
        }
        // the bound: fewer than redis.max.pending plus one group of XADDs (batch.rows here) in the stream
        assertThat(written).hasSizeGreaterThanOrEqualTo(300).hasSizeLessThan(300 + 100);
        assertThat(refused).isEqualTo(n - written.size());
        // the same config (same member): the next sink lands what Redis took, and nothing else
        try (EventSink again = EventSink.open(config)) {
            Tables.awaitRows(clickHouse, t, written.size(), Duration.ofSeconds(60));
            Await.until("stream emptied", Duration.ofSeconds(30), () -> redis.commandLong("XLEN", config.redisStream()) == 0);
        }
        assertThat(Tables.landedIds(clickHouse, t)).isEqualTo(written); // each once, exactly those Redis took
    }
}
