package io.sluice.ingest;

import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.sluice.redis.GroupReader;
import io.sluice.redis.RedisEndpoint;
import io.sluice.redis.StreamEntry;
import io.sluice.redis.internal.PackedEntries;
import io.sluice.testkit.Await;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.RedisServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.sluice.ingest.Tables.event;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An entry whose packed field {@code b} does not parse (written by a buggy or foreign writer, or damaged) sits in the
 * stream between good entries: the stream strategies dead-letter its raw field with the error and acknowledge it, and
 * land the good entries once each, instead of retrying the bad one forever and wedging the stream.
 */
@ExtendWith(ServicesExtension.class)
class MalformedEntryTest {
    private static final byte[] PACKED = PackedEntries.PACKED;
    static String db;

    @BeforeAll
    static void database(ClickHouseServer clickHouse) {
        db = clickHouse.createDatabase("malformed");
    }

    /** Events [from, to) packed into entries of {@code perEntry} events, as the sink's writer packs them. */
    private static void appendGood(RedisEndpoint.Link link, byte[] key, int from, int to, int perEntry) {
        for (int i = from; i < to; i += perEntry) {
            List<byte[]> events = new ArrayList<>();
            for (int k = i; k < Math.min(to, i + perEntry); k++) {
                events.add(event(k));
            }
            link.sync().xadd(key, PACKED, PackedEntries.pack(events, 0, events.size()));
        }
    }

    private static String createTable(ClickHouseServer clickHouse, String name) {
        String table = db + "." + name;
        clickHouse.execute("CREATE TABLE " + table + " (id UInt64, name String, value Int64, _sluice_entry String,"
                + " _sluice_index UInt32) ENGINE = MergeTree ORDER BY (_sluice_entry, _sluice_index)");
        return table;
    }

    private static List<Map<String, byte[]>> deadLetters(RedisEndpoint.Link link, String stream) {
        List<Map<String, byte[]>> out = new ArrayList<>();
        for (StreamMessage<byte[], byte[]> m : link.sync().xrange((stream + ":dead-letters").getBytes(StandardCharsets.UTF_8),
                Range.create("-", "+"))) {
            Map<String, byte[]> fields = new HashMap<>();
            m.getBody().forEach((k, v) -> fields.put(new String(k, StandardCharsets.UTF_8), v));
            out.add(fields);
        }
        return out;
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @EnumSource(value = Strategy.class, names = {"REDIS_STREAM", "WORKER_POOL"})
    void aMalformedEntryBetweenGoodOnesIsDeadLetteredAndAcknowledgedWhileTheGoodOnesLandOnce(
            Strategy strategy, ClickHouseServer clickHouse, RedisServer redis) {
        String table = createTable(clickHouse, "between_" + strategy.configName().replace('-', '_'));
        String stream = "it:malformed:" + System.nanoTime();
        byte[] key = stream.getBytes(StandardCharsets.UTF_8);
        // event "x", then a length of 200 with 3 bytes left: a length running past the field's end, at offset 2
        byte[] corrupt = {1, 'x', (byte) 0xC8, 0x01, 'a', 'b', 'c'};
        int n = 3_000;
        String badId;
        try (RedisEndpoint endpoint = new RedisEndpoint(redis.url(), false, 1_000);
             RedisEndpoint.Link link = endpoint.connect()) {
            appendGood(link, key, 0, n / 2, 100);
            badId = link.sync().xadd(key, PACKED, corrupt);
            appendGood(link, key, n / 2, n, 100);

            IngestConfig config = Tables.config(clickHouse, table, strategy).redisUrl(redis.url()).redisStream(stream)
                    .workers(2).batchRows(1_000).lingerMs(10).build();
            try (EventSink sink = EventSink.open(config)) {
                assertThat(sink.guarantee()).isEqualTo(Guarantee.EXACTLY_ONCE_ENTRY_COLUMNS);
                Tables.awaitRows(clickHouse, table, n, Duration.ofSeconds(30));
                Await.until("every entry acknowledged and trimmed", Duration.ofSeconds(30),
                        () -> redis.commandLong("XLEN", stream) == 0);
                assertThat(sink.metrics().get("dead_lettered").longValue()).isEqualTo(1);
            }

            List<Map<String, byte[]>> letters = deadLetters(link, stream);
            assertThat(letters).singleElement().satisfies(l -> {
                assertThat(l.get("payload")).as("the raw field").isEqualTo(corrupt);
                assertThat(text(l.get("error"))).contains(badId).contains("offset 2").contains("event length 200");
                assertThat(text(l.get("source"))).isEqualTo(stream + "/" + badId);
            });
        }
        assertThat(Tables.contentSummary(clickHouse, table)).isEqualTo(Tables.expectedSummary(n));
        assertThat(clickHouse.queryLong("SELECT uniqExact(_sluice_entry, _sluice_index) FROM " + table)).isEqualTo(n);
        assertThat(clickHouse.queryLong("SELECT countIf(_sluice_entry = '" + badId + "') FROM " + table)).isZero();
    }

    @Test
    void aMalformedEntryADeadWorkerHeldIsTakenOverAndDeadLettered(ClickHouseServer clickHouse, RedisServer redis) {
        String table = createTable(clickHouse, "taken_over");
        String stream = "it:malformed-takeover:" + System.nanoTime();
        byte[] key = stream.getBytes(StandardCharsets.UTF_8);
        byte[] corrupt = {(byte) 0x81, (byte) 0x81, (byte) 0x81, (byte) 0x81, (byte) 0x81, (byte) 0x81, 0x01}; // varint > 5 bytes
        int n = 1_000;
        IngestConfig config = Tables.config(clickHouse, table, Strategy.WORKER_POOL).redisUrl(redis.url()).redisStream(stream)
                .workers(2).redisClaimIdleMs(300).batchRows(500).lingerMs(10).build();
        String badId;
        try (RedisEndpoint endpoint = new RedisEndpoint(redis.url(), false, 1_000);
             RedisEndpoint.Link link = endpoint.connect()) {
            appendGood(link, key, 0, n / 2, 50);
            badId = link.sync().xadd(key, PACKED, corrupt);
            appendGood(link, key, n / 2, n, 50);
            // a worker that read everything and died without acknowledging: every entry is pending at it
            try (GroupReader dead = new GroupReader(endpoint, stream, config.redisGroup(), "dead-worker")) {
                dead.open();
                List<StreamEntry> taken = dead.read(100, 0, () -> true);
                assertThat(taken).hasSize(21);
                assertThat(taken).filteredOn(StreamEntry::isMalformed).extracting(StreamEntry::id).containsExactly(badId);
            }

            try (EventSink sink = EventSink.open(config)) {
                Tables.awaitRows(clickHouse, table, n, Duration.ofSeconds(30));
                Await.until("every entry acknowledged and trimmed", Duration.ofSeconds(30),
                        () -> redis.commandLong("XLEN", stream) == 0);
                assertThat(sink.metrics().get("dead_lettered").longValue()).isEqualTo(1);
            }

            assertThat(deadLetters(link, stream)).singleElement().satisfies(l -> {
                assertThat(l.get("payload")).isEqualTo(corrupt);
                assertThat(text(l.get("error"))).contains(badId).contains("offset 0").contains("longer than 5 bytes");
                assertThat(text(l.get("source"))).isEqualTo(stream + "/" + badId);
            });
        }
        assertThat(Tables.contentSummary(clickHouse, table)).isEqualTo(Tables.expectedSummary(n));
        assertThat(clickHouse.queryLong("SELECT uniqExact(_sluice_entry, _sluice_index) FROM " + table)).isEqualTo(n);
    }
}
