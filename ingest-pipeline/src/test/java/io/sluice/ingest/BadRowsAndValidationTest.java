package io.sluice.ingest;

import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.ingest.IngestException.RowRejectedException;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.sluice.ingest.Tables.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(ServicesExtension.class)
class BadRowsAndValidationTest {
    static String db;

    @BeforeAll
    static void database(ClickHouseServer clickHouse) {
        db = clickHouse.createDatabase("badrows");
    }

    @Test
    void rowsClickHouseRejectsAreIsolatedAndDeadLetteredWhileTheRestLands(ClickHouseServer clickHouse) throws Exception {
        String t = Tables.createEvents(clickHouse, db, "bisect");
        Set<Integer> bad = Set.of(17, 500, 999);
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        try (EventSink sink = EventSink.open(Tables.config(clickHouse, t, Strategy.COALESCING).batchRows(1_000).lingerMs(50).build())) {
            for (int i = 0; i < 1_000; i++) {
                writes.add(sink.write(bad.contains(i)
                        ? ("{\"id\":\"not-a-number-" + i + "\",\"name\":\"bad\",\"value\":0}").getBytes(StandardCharsets.UTF_8)
                        : event(i)));
            }
            sink.flush();
            assertThat(sink.metrics().get("dead_lettered").longValue()).isEqualTo(3);
        }
        int rejected = 0;
        for (CompletableFuture<Void> w : writes) {
            try {
                w.get(1, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                assertThat(e.getCause()).isInstanceOf(RowRejectedException.class).hasMessageContaining("Code: 27");
                rejected++;
            }
        }
        assertThat(rejected).isEqualTo(3);
        assertThat(clickHouse.queryLong("SELECT count() FROM " + t)).isEqualTo(997);
        assertThat(clickHouse.queryLong("SELECT countIf(id IN (17, 500, 999)) FROM " + t)).isZero();
        assertThat(clickHouse.queryLines("SELECT payload FROM " + t + "_dead_letters ORDER BY payload"))
                .containsExactly("{\"id\":\"not-a-number-17\",\"name\":\"bad\",\"value\":0}",
                        "{\"id\":\"not-a-number-500\",\"name\":\"bad\",\"value\":0}",
                        "{\"id\":\"not-a-number-999\",\"name\":\"bad\",\"value\":0}");
        assertThat(clickHouse.queryLong("SELECT countIf(error LIKE '%Cannot parse%') FROM " + t + "_dead_letters")).isEqualTo(3);
    }

    @Test
    void anEventThatIsNotAJsonObjectIsRefusedBeforeAnythingIsAccepted(ClickHouseServer clickHouse) {
        String t = Tables.createEvents(clickHouse, db, "frontdoor");
        try (EventSink sink = EventSink.open(Tables.config(clickHouse, t, Strategy.COALESCING).build())) {
            assertThatThrownBy(() -> sink.write("[1,2]".getBytes(StandardCharsets.UTF_8)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not one JSON object");
            assertThatThrownBy(() -> sink.write("  ".getBytes(StandardCharsets.UTF_8)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(sink.metrics().get("events_accepted").longValue()).isZero();
        }
    }

    @Test
    void aMissingTableFailsAtStartWithAClearMessage(ClickHouseServer clickHouse) {
        assertThatThrownBy(() -> EventSink.open(Tables.config(clickHouse, db + ".nope", Strategy.SYNC).build()))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("table")
                .hasMessageContaining(db + ".nope")
                .hasMessageContaining("does not exist");
    }

    @Test
    void theTableIsCreatedFromTheGivenDdl(ClickHouseServer clickHouse) throws Exception {
        String t = db + ".from_ddl";
        IngestConfig config = Tables.config(clickHouse, t, Strategy.SYNC)
                .tableDdl("CREATE TABLE IF NOT EXISTS " + t + " (id UInt64, name String, value Int64) ENGINE = MergeTree ORDER BY id")
                .build();
        try (EventSink sink = EventSink.open(config)) {
            sink.write(event(7)).get(10, TimeUnit.SECONDS);
        }
        assertThat(clickHouse.queryLines("SELECT id, name, value FROM " + t)).containsExactly("7\tn7\t21");
    }

    /** Typed rows: "id|name" text events encoded to RowBinary by a user encoder. */
    public static final class PipeEncoder implements RowEncoder {
        @Override
        public List<String> columns() {
            return List.of("id", "name", "value");
        }

        @Override
        public void encode(byte[] event, RowBinaryWriter out) {
            String[] parts = new String(event, StandardCharsets.UTF_8).split("\\|");
            long id = Long.parseLong(parts[0]);
            out.writeUInt64(id).writeString(parts[1]).writeInt64(3 * id);
        }
    }

    @Test
    void typedRowsAreEncodedToRowBinaryByTheUsersEncoder(ClickHouseServer clickHouse) throws Exception {
        String t = Tables.createEvents(clickHouse, db, "typed");
        int n = 10_000;
        try (EventSink sink = EventSink.open(Tables.config(clickHouse, t, Strategy.COALESCING).rowEncoder(new PipeEncoder()).build())) {
            for (int i = 0; i < n; i++) {
                sink.write(("" + i + "|n" + i).getBytes(StandardCharsets.UTF_8));
            }
            assertThatThrownBy(() -> sink.write("x|y".getBytes(StandardCharsets.UTF_8)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("refused");
            sink.flush();
        }
        assertThat(Tables.contentSummary(clickHouse, t)).isEqualTo(Tables.expectedSummary(n));
    }

    @Test
    void anEncoderWhoseColumnsTheTableLacksFailsAtStart(ClickHouseServer clickHouse) {
        String t = db + ".narrow";
        clickHouse.execute("CREATE TABLE " + t + " (id UInt64) ENGINE = MergeTree ORDER BY id");
        assertThatThrownBy(() -> EventSink.open(Tables.config(clickHouse, t, Strategy.SYNC).rowEncoder(new PipeEncoder()).build()))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("lacks the columns [name, value]");
    }
}
