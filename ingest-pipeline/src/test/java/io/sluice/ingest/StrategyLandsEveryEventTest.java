package io.sluice.ingest;

import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.RedisServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.sluice.ingest.Tables.config;
import static io.sluice.ingest.Tables.contentSummary;
import static io.sluice.ingest.Tables.event;
import static io.sluice.ingest.Tables.expectedSummary;
import static org.assertj.core.api.Assertions.assertThat;

/** Every strategy behind {@link EventSink}: N events in, exactly N rows with the right content out. */
@ExtendWith(ServicesExtension.class)
class StrategyLandsEveryEventTest {
    static String db;

    @BeforeAll
    static void database(ClickHouseServer clickHouse) {
        db = clickHouse.createDatabase("strategies");
    }

    private void landsExactly(ClickHouseServer clickHouse, IngestConfig.Builder builder, String table, int n) throws Exception {
        List<CompletableFuture<Void>> writes = new ArrayList<>(n);
        try (EventSink sink = EventSink.open(builder.build())) {
            for (int i = 0; i < n; i++) {
                writes.add(sink.write(event(i)));
            }
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            sink.flush();
            Tables.awaitRows(clickHouse, table, n, Duration.ofSeconds(30));
            // the rows can be queryable a moment before the sink has counted the INSERT's answer
            io.sluice.testkit.Await.until("the sink to count every row", Duration.ofSeconds(30),
                    () -> sink.metrics().get("rows_inserted").longValue() >= n);
        }
        assertThat(contentSummary(clickHouse, table)).isEqualTo(expectedSummary(n));
    }

    @Test
    void syncInsertLandsEveryEventOnce(ClickHouseServer clickHouse) throws Exception {
        String t = Tables.createEvents(clickHouse, db, "sync");
        landsExactly(clickHouse, config(clickHouse, t, Strategy.SYNC), t, 200);
    }

    @Test
    void asyncInsertThroughABufferTableLandsEveryEventOnce(ClickHouseServer clickHouse) throws Exception {
        String t = Tables.createEvents(clickHouse, db, "async");
        landsExactly(clickHouse, config(clickHouse, t, Strategy.ASYNC).maxInFlight(16), t, 1_000);
        assertThat(clickHouse.queryLong("SELECT count() FROM system.tables WHERE database = '" + db
                + "' AND name = 'async_sluice_buffer' AND engine = 'Buffer'")).isEqualTo(1);
    }

    @Test
    void coalescingLandsEveryEventOnce(ClickHouseServer clickHouse) throws Exception {
        String t = Tables.createEvents(clickHouse, db, "coalescing");
        landsExactly(clickHouse, config(clickHouse, t, Strategy.COALESCING).batchRows(5_000).lingerMs(20), t, 50_000);
    }

    @Test
    void redisStreamLandsEveryEventOnceAndEmptiesTheStream(ClickHouseServer clickHouse, RedisServer redis) throws Exception {
        String t = Tables.createEvents(clickHouse, db, "redis_stream");
        landsExactly(clickHouse, config(clickHouse, t, Strategy.REDIS_STREAM).redisUrl(redis.url())
                .redisStream("it:" + t).batchRows(5_000).lingerMs(20), t, 50_000);
        assertThat(redis.commandLong("XLEN", "it:" + t)).isZero();
    }

    @Test
    void workerPoolLandsEveryEventOnceAndEmptiesTheStream(ClickHouseServer clickHouse, RedisServer redis) throws Exception {
        String t = Tables.createEvents(clickHouse, db, "worker_pool");
        landsExactly(clickHouse, config(clickHouse, t, Strategy.WORKER_POOL).redisUrl(redis.url()).workers(3)
                .redisStream("it:" + t).batchRows(5_000).lingerMs(20), t, 50_000);
        assertThat(redis.commandLong("XLEN", "it:" + t)).isZero();
    }

    /**
     * close() at once after the writes: close lands what was written, and its drainer's last acknowledgements come
     * in quick succession (batches of 100 rows), so their own trim (at most every 100 ms) is mostly skipped; the tail
     * they leave must leave the stream in close, not at an idle poll that never comes. Three rounds.
     */
    @Test
    void aRedisStreamSinkClosedRightAfterItsWritesLandsThemAndLeavesNothingInTheStream(ClickHouseServer clickHouse,
                                                                                      RedisServer redis) throws Exception {
        int n = 2_000;
        for (int round = 0; round < 3; round++) {
            String t = Tables.createEvents(clickHouse, db, "closed_at_once_" + round);
            String stream = "it:" + t;
            List<CompletableFuture<Void>> writes = new ArrayList<>(n);
            try (EventSink sink = EventSink.open(config(clickHouse, t, Strategy.REDIS_STREAM).redisUrl(redis.url())
                    .redisStream(stream).batchRows(100).lingerMs(5).build())) {
                for (int i = 0; i < n; i++) {
                    writes.add(sink.write(event(i)));
                }
            }
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(1, TimeUnit.SECONDS); // all done in close
            assertThat(contentSummary(clickHouse, t)).isEqualTo(expectedSummary(n));
            assertThat(redis.commandLong("XLEN", stream)).as("entries left in the stream, round " + round).isZero();
        }
    }
}
