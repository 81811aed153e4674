package io.sluice.ingest;

import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.Await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** Test events {@code {"id":i,"name":"n<i>","value":3i}} and checks that exactly ids 0..n-1 landed, once each. */
final class Tables {
    private Tables() {
    }

    static String createEvents(ClickHouseServer clickHouse, String db, String name) {
        String table = db + "." + name;
        clickHouse.execute("CREATE TABLE " + table + " (id UInt64, name String, value Int64) ENGINE = MergeTree ORDER BY id");
        return table;
    }

    /** Plain MergeTree on purpose (a ReplacingMergeTree would hide duplicates at merge time), with the offset columns. */
    static String createWithOffsets(ClickHouseServer clickHouse, String db, String name) {
        String table = db + "." + name;
        clickHouse.execute("CREATE TABLE " + table + " (id UInt64, name String, value Int64, _sluice_partition UInt32,"
                + " _sluice_offset UInt64) ENGINE = MergeTree ORDER BY (_sluice_partition, _sluice_offset)");
        return table;
    }

    static byte[] event(long i) {
        return ("{\"id\":" + i + ",\"name\":\"n" + i + "\",\"value\":" + (3 * i) + "}").getBytes(StandardCharsets.UTF_8);
    }

    static IngestConfig.Builder config(ClickHouseServer clickHouse, String table, Strategy strategy) {
        return IngestConfig.builder("t-" + strategy.configName()).clickHouseUrl(clickHouse.url()).table(table)
                .strategy(strategy).retryInitialMs(20).retryMaxMs(500);
    }

    static void awaitRows(ClickHouseServer clickHouse, String table, long n, Duration deadline) {
        // a ClickHouse the test restarted may still be starting: unreachable counts as "not yet", not as a failure
        Await.until(n + " rows in " + table, deadline, () -> {
            try {
                return clickHouse.queryLong("SELECT count() FROM " + table) >= n;
            } catch (java.io.UncheckedIOException notUpYet) {
                return false;
            }
        });
    }

    /** count, distinct ids, sums and a sample row: ids 0..n-1 each exactly once with their own content. */
    static String contentSummary(ClickHouseServer clickHouse, String table) {
        return clickHouse.query("SELECT count(), uniqExact(id), sum(id), sum(value), countIf(name = concat('n', toString(id)))"
                + " FROM " + table + " FORMAT TabSeparated").strip();
    }

    static String expectedSummary(long n) {
        long sum = n * (n - 1) / 2;
        return n + "\t" + n + "\t" + sum + "\t" + (3 * sum) + "\t" + n;
    }

    /** The ids of the rows in {@code table}, checking that none is there twice. */
    static java.util.Set<Long> landedIds(ClickHouseServer clickHouse, String table) {
        java.util.List<String> ids = clickHouse.queryLines("SELECT id FROM " + table);
        java.util.Set<Long> landed = new java.util.HashSet<>();
        for (String id : ids) {
            landed.add(Long.parseLong(id));
        }
        org.assertj.core.api.Assertions.assertThat(ids).as("no event twice in " + table).hasSameSizeAs(landed);
        return landed;
    }
}
