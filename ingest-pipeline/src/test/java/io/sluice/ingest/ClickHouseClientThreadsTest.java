package io.sluice.ingest;

import io.sluice.testkit.Await;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The ClickHouse HTTP client works on its own named threads, and they end when the sink closes. */
@ExtendWith(ServicesExtension.class)
class ClickHouseClientThreadsTest {

    private static List<String> clientThreads(String pipeline) {
        List<String> names = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && t.getName().startsWith("sluice-clickhouse-" + pipeline + "-")) {
                names.add(t.getName());
            }
        }
        return names;
    }

    @Test
    void theClientsThreadsAreNamedAfterThePipelineAndStopWithIt(ClickHouseServer clickHouse) throws Exception {
        String db = clickHouse.createDatabase("client_threads");
        String table = Tables.createEvents(clickHouse, db, "events");
        IngestConfig config = IngestConfig.builder("threads").clickHouseUrl(clickHouse.url()).table(table)
                .strategy(Strategy.COALESCING).batchRows(100).lingerMs(5).build();
        try (EventSink sink = EventSink.open(config)) {
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int i = 0; i < 1_000; i++) {
                writes.add(sink.write(Tables.event(i)));
            }
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            assertThat(clientThreads("threads")).isNotEmpty().hasSizeLessThanOrEqualTo(2)
                    .allSatisfy(name -> assertThat(name).matches("sluice-clickhouse-threads-\\d+"));
        }
        Await.until("the ClickHouse client's threads to end", Duration.ofSeconds(30), () -> clientThreads("threads").isEmpty());
        assertThat(clickHouse.queryLong("SELECT count() FROM " + table)).isEqualTo(1_000);
    }
}
