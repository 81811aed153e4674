package io.sluice.ingest.internal;

import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.Strategy;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;

/**
 * What the journal's idempotent INSERT costs against a plain INSERT of the same rows, on the same server:
 * alternating batches of each kind into two identical tables (plain MergeTree ordered by the offset columns),
 * one request at a time, JSONEachRow. Reports rows/s and per-batch latency percentiles.
 *
 * <p>A measurement, not a test: it sits beside the statement it measures (test sources of ingest-pipeline, the
 * statement's own package) so that no other module reaches into {@code io.sluice.ingest.internal} (issue 21). Run it
 * from the module's test class path, against a running ClickHouse:
 * <pre>
 * ./mvnw -q -o -pl ingest-pipeline -am test-compile dependency:build-classpath -Dmdep.outputFile=target/test.classpath
 * java $(cat bench-harness/target/jvm.options) \
 *   -cp ingest-pipeline/target/test-classes:ingest-pipeline/target/classes:$(cat ingest-pipeline/target/test.classpath) \
 *   io.sluice.ingest.internal.IdempotentInsertCost --clickhouse http://127.0.0.1:8123 [--rows 10000] [--batches 40]
 * </pre>
 */
public final class IdempotentInsertCost {
    private IdempotentInsertCost() {
    }

    public static void main(String[] args) {
        String url = "http://127.0.0.1:8123";
        int rows = 10_000;
        int batches = 40;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--clickhouse" -> url = args[++i];
                case "--rows" -> rows = Integer.parseInt(args[++i]);
                case "--batches" -> batches = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        ClickHouseHttp http = new ClickHouseHttp(url, "default", "", Duration.ofSeconds(120), "idempotent-insert-cost");
        String db = "sluice_cost_" + ProcessHandle.current().pid();
        http.query("CREATE DATABASE IF NOT EXISTS " + db);
        String ddl = " (id UInt64, name String, value Int64, _sluice_partition UInt32, _sluice_offset UInt64)"
                + " ENGINE = MergeTree ORDER BY (_sluice_partition, _sluice_offset)";
        http.query("CREATE TABLE " + db + ".plain" + ddl);
        http.query("CREATE TABLE " + db + ".idem" + ddl);
        IngestConfig config = IngestConfig.builder("cost").clickHouseUrl(url).table(db + ".idem").strategy(Strategy.OFFSET_RANGE).build();
        ClickHouseTarget target = ClickHouseTarget.open(config, http);
        IdempotentInsert idem = new IdempotentInsert(target, null, RowFormat.Provenance.OFFSETS);
        String version = target.version();

        long[] plainNanos = new long[batches];
        long[] idemNanos = new long[batches];
        for (int b = 0; b < batches; b++) {
            byte[] body = batch(b, rows);
            long t0 = System.nanoTime();
            http.insert("INSERT INTO " + db + ".plain FORMAT JSONEachRow", Map.of(), body, 0, body.length);
            long t1 = System.nanoTime();
            IdempotentInsert.Statement s = idem.offsets(0, (long) b * rows, (long) (b + 1) * rows - 1, "cost-" + db + "-" + b);
            http.insertExternal(s, Map.of(), body, 0, body.length);
            long t2 = System.nanoTime();
            plainNanos[b] = t1 - t0;
            idemNanos[b] = t2 - t1;
        }
        // a retry of every batch: the idempotent insert finds the rows and adds nothing
        long[] retryNanos = new long[batches];
        for (int b = 0; b < batches; b++) {
            byte[] body = batch(b, rows);
            long t0 = System.nanoTime();
            http.insertExternal(idem.offsets(0, (long) b * rows, (long) (b + 1) * rows - 1, "cost-" + db + "-" + b), Map.of(), body, 0, body.length);
            retryNanos[b] = System.nanoTime() - t0;
        }
        long plainCount = Long.parseLong(http.query("SELECT count() FROM " + db + ".plain FORMAT TabSeparated").strip());
        long idemCount = Long.parseLong(http.query("SELECT count() FROM " + db + ".idem FORMAT TabSeparated").strip());
        System.out.printf("ClickHouse %s, %d batches of %,d rows (JSONEachRow), one request at a time%n", version, batches, rows);
        System.out.println("| insert | rows/s | batch p50 (ms) | batch p90 (ms) | rows in table |");
        System.out.println("|---|--:|--:|--:|--:|");
        line("plain INSERT", plainNanos, rows, plainCount);
        line("idempotent INSERT ... SELECT (external data, NOT IN)", idemNanos, rows, idemCount);
        line("idempotent retry of every batch (adds nothing)", retryNanos, rows, idemCount);
        http.query("DROP DATABASE " + db);
    }

    private static byte[] batch(int b, int rows) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(rows * 80);
        for (int i = 0; i < rows; i++) {
            long o = (long) b * rows + i;
            out.writeBytes(("{\"id\":" + o + ",\"name\":\"n" + o + "\",\"value\":" + (3 * o) + ",\"_sluice_partition\":0,\"_sluice_offset\":"
                    + o + "}\n").getBytes(StandardCharsets.UTF_8));
        }
        return out.toByteArray();
    }

    private static void line(String name, long[] nanos, int rows, long count) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        long total = Arrays.stream(nanos).sum();
        System.out.printf("| %s | %,.0f | %.1f | %.1f | %,d |%n", name, rows * (double) nanos.length / (total / 1e9),
                sorted[sorted.length / 2] / 1e6, sorted[(int) (sorted.length * 0.9)] / 1e6, count);
    }
}
