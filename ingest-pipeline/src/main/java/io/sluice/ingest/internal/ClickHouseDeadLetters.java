package io.sluice.ingest.internal;

import io.sluice.ingest.IngestException;
import io.sluice.ingest.RowBinaryWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * Dead letters in a ClickHouse table next to the target:
 * {@code (at DateTime, pipeline String, source String, error String, payload String)}, created if missing,
 * written in RowBinary (binary-safe for typed rows).
 */
public final class ClickHouseDeadLetters implements DeadLetters {
    private static final Logger LOG = LoggerFactory.getLogger(ClickHouseDeadLetters.class);

    private final ClickHouseHttp http;
    private final String table;
    private final String pipeline;
    private final long retryInitialMs;
    private final long retryMaxMs;
    private final BooleanSupplier giveUp;

    public ClickHouseDeadLetters(ClickHouseHttp http, String table, String pipeline, long retryInitialMs, long retryMaxMs,
                                 BooleanSupplier giveUp) {
        this.http = http;
        this.table = table;
        this.pipeline = pipeline;
        this.retryInitialMs = retryInitialMs;
        this.retryMaxMs = retryMaxMs;
        this.giveUp = giveUp;
        http.query("CREATE TABLE IF NOT EXISTS " + table + " (at DateTime, pipeline String, source String, error String,"
                + " payload String) ENGINE = MergeTree ORDER BY at");
    }

    @Override
    public void write(List<Letter> letters) {
        RowBinaryWriter w = new RowBinaryWriter(1024);
        long now = System.currentTimeMillis() / 1000;
        for (Letter l : letters) {
            w.writeDateTime(now).writeString(pipeline).writeString(l.source()).writeString(l.error()).writeString(l.payload());
        }
        Backoff backoff = new Backoff(retryInitialMs, retryMaxMs);
        String sql = "INSERT INTO " + table + " (at, pipeline, source, error, payload) FORMAT RowBinary";
        while (true) {
            try {
                http.insert(sql, Map.of(), w.array(), 0, w.size());
                LOG.warn("{} row(s) rejected by ClickHouse went to {}; first error: {}", letters.size(), table, letters.get(0).error());
                return;
            } catch (IngestException e) {
                if (giveUp.getAsBoolean()) {
                    throw e;
                }
                LOG.warn("cannot write {} dead letter(s) to {} yet: {}", letters.size(), table, e.getMessage());
                try {
                    backoff.pause();
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }
}
