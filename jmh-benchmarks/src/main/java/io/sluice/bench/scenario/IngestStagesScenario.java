package io.sluice.bench.scenario;

import io.sluice.bench.BenchOptions;
import io.sluice.bench.Scenario;
import io.sluice.bench.internal.Latency;
import io.sluice.bench.report.Better;
import io.sluice.bench.report.ScenarioResult;
import io.sluice.bench.report.Table;
import io.sluice.bench.report.chart.BarChart;
import io.sluice.bench.report.chart.Chart;
import io.sluice.bench.server.ClickHouseServer;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;

/**
 * Reproduces {@code 003_dc9b03795dfe9344.txt}: the five ingestion stages into ClickHouse plus Sluice's journal
 * strategy, beside the raw ceiling measured in the same run — plain RowBinary inserts of pre-built 10,000-row batches
 * over HTTP to the same private clickhouse-server. The stage rows need ingest-pipeline's strategies; until that module
 * is in the build they are reported as not available.
 */
public final class IngestStagesScenario implements Scenario {
    static final int BATCH = 10_000;
    private static final String TABLE = "bench.events";
    private static final String[] STAGES = {"01 sync insert", "02 async insert (fire-and-forget)", "03 coalescing",
            "04 Redis-stream buffer", "05 worker pool", "06 journal (Sluice)"};
    /** Reference: throughput req/s, avg ms, P99 ms, heap MB; NaN where the reference has no such stage. */
    private static final double[][] REF = {
            {116.41, 8.59, 12.95, 18.48}, {953.14, 0.05, 0.13, 90.39}, {2_465.15, 19.52, 23.67, 11.21},
            {17_920.09, 135.96, 137.19, 21.14}, {34_040.14, 141.12, 142.7, 29.7}, {Double.NaN, Double.NaN, Double.NaN, Double.NaN}};
    private static final String MISSING = "ingest-pipeline's strategies are not in this build";

    @Override
    public String name() {
        return "ingest-stages";
    }

    @Override
    public String title() {
        return "ingestion into ClickHouse: five stages, the journal strategy and the raw ceiling";
    }

    @Override
    public String reference() {
        return "003_dc9b03795dfe9344.txt";
    }

    @Override
    public ScenarioResult run(BenchOptions o) throws Exception {
        List<String> notes = new ArrayList<>();
        List<Table> tables = new ArrayList<>();
        List<Chart> charts = new ArrayList<>();
        int rows = Integer.parseInt(o.extra().getOrDefault("rows", Integer.toString(o.size(200_000, 20_000))));
        int batches = Math.max(1, rows / BATCH);
        notes.add("Raw ceiling: one thread sends pre-built RowBinary bodies of " + String.format("%,d", BATCH) + " rows "
                + "(`" + RowBinaryBatch.COLUMNS + "`, ~90 bytes per row) as `INSERT INTO " + TABLE + " FORMAT RowBinary` "
                + "over HTTP to a private clickhouse-server (MergeTree); " + String.format("%,d", batches * BATCH)
                + " rows per run. Landed rows are counted in ClickHouse after each run. A row is queryable when its INSERT "
                + "returns (synchronous MergeTree insert), so ingest→queryable latency = batch insert latency.");
        notes.add("Stage rows: " + MISSING + " — each stage reports \"not available\" beside the reference's figure.");
        if (ClickHouseServer.binary() == null) {
            notes.add("Not available: no clickhouse-server on this machine (" + ClickHouseServer.DEFAULT_BINARY + ").");
            return new ScenarioResult(name(), title(), reference(), tables, charts, notes, 0);
        }
        List<Run> raw;
        List<Long> landed = new ArrayList<>();
        try (ClickHouseServer ch = ClickHouseServer.start(o.workDir())) {
            notes.add("clickhouse-server " + ch.query("SELECT version()") + " on 127.0.0.1:" + ch.httpPort() + ".");
            ch.query("CREATE DATABASE IF NOT EXISTS bench");
            ch.query("CREATE TABLE " + TABLE + " (" + RowBinaryBatch.COLUMNS + ") ENGINE = MergeTree ORDER BY id");
            long epoch = System.currentTimeMillis() / 1000;
            int[] runId = {0};
            raw = Repeat.runs(o, () -> {
                int run = ++runId[0];
                // bodies are built before the clock starts: the ceiling measures ClickHouse, not the encoder
                List<byte[]> mine = new ArrayList<>();
                for (int b = 0; b < batches; b++) {
                    mine.add(RowBinaryBatch.build(run, (long) b * BATCH, BATCH, epoch));
                }
                Histogram h = Latency.newHistogram();
                long start = System.nanoTime();
                for (byte[] body : mine) {
                    long t0 = System.nanoTime();
                    ch.insert(TABLE, "RowBinary", body);
                    Latency.record(h, System.nanoTime() - t0);
                }
                long nanos = System.nanoTime() - start;
                long count = Long.parseLong(ch.query("SELECT count() FROM " + TABLE + " WHERE run = " + run));
                landed.add(count);
                return new Run(count, nanos, h);
            });
        }
        long expected = (long) batches * BATCH;
        long lost = landed.stream().filter(c -> c != expected).count();
        notes.add("Every raw run landed " + (lost == 0 ? "exactly " + String.format("%,d", expected) + " rows"
                : "a different count in " + lost + " run(s): " + landed));

        Table.Builder stages = Table.builder("The reference's stage table (+ Sluice's journal strategy)", "— (see the raw ceiling below)");
        BarChart bars = new BarChart("ingest-stages-throughput.svg", "ingest-stages: rows/s into ClickHouse", "rows/s",
                List.of("Sluice", "raw RowBinary ceiling", "reference"));
        for (int s = 0; s < STAGES.length; s++) {
            Double ref = Double.isNaN(REF[s][0]) ? null : REF[s][0];
            stages.row(STAGES[s] + " throughput", "req/s", Better.HIGHER, null, null, ref, s == 0 ? MISSING : null);
            stages.row(STAGES[s] + " avg latency", "ms", Better.LOWER, null, null, Double.isNaN(REF[s][1]) ? null : REF[s][1], null);
            stages.row(STAGES[s] + " P99 latency", "ms", Better.LOWER, null, null, Double.isNaN(REF[s][2]) ? null : REF[s][2], null);
            stages.row(STAGES[s] + " landed rows/s", "rows/s", Better.HIGHER, null, null, null, s == 0 ? "counted in ClickHouse (the reference did not measure it)" : null);
            stages.row(STAGES[s] + " ingest→queryable P99", "ms", Better.LOWER, null, null, null, null);
            stages.row(STAGES[s] + " heap", "MiB", Better.LOWER, null, null, Double.isNaN(REF[s][3]) ? null : REF[s][3], null);
            bars.category(STAGES[s], null, null, ref);
        }
        tables.add(stages.build());
        Table.Builder ceiling = Table.builder("Raw ceiling: pre-built RowBinary batches of 10,000 rows, one inserter",
                "plain HTTP `INSERT … FORMAT RowBinary`");
        ceiling.row("Rows/s (client)", "rows/s", Better.HIGHER, null, Repeat.sample(raw, Run::perSecond), null, "Sluice's coalescing, worker-pool and journal goal: ≥ 50% of this");
        ceiling.row("Landed rows/s (counted in ClickHouse)", "rows/s", Better.HIGHER, null, Repeat.sample(raw, Run::perSecond), 34_040.14, "reference: its best stage's req/s (not landed rows)");
        ceiling.row("Batch insert avg = ingest→queryable avg", "ms", Better.LOWER, null, Repeat.sample(raw, r -> r.latency().getMean() / 1e6), null, null);
        ceiling.row("Batch insert P99 = ingest→queryable P99", "ms", Better.LOWER, null, Repeat.sample(raw, r -> r.latency().getValueAtPercentile(99) / 1e6), null, null);
        tables.add(ceiling.build());
        bars.category("raw RowBinary 10k-row batches", null, Repeat.median(raw, Run::perSecond), null);
        charts.add(bars);
        return new ScenarioResult(name(), title(), reference(), tables, charts, notes, 0);
    }
}
