package io.sluice.bench.scenario;

import io.sluice.bench.BenchOptions;
import io.sluice.bench.Scenario;
import io.sluice.bench.internal.Latency;
import io.sluice.bench.report.Better;
import io.sluice.bench.report.ScenarioResult;
import io.sluice.bench.report.Table;
import io.sluice.bench.report.chart.BarChart;
import io.sluice.bench.report.chart.Chart;
import io.sluice.bench.internal.TempDir;
import io.sluice.bench.server.ClickHouseServer;
import io.sluice.bench.server.RedisServer;
import io.sluice.core.Broker;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.Strategy;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;

/**
 * Reproduces {@code 003_dc9b03795dfe9344.txt}: the five ingestion stages into ClickHouse plus Sluice's journal
 * strategy, beside the raw ceiling measured in the same run — plain RowBinary inserts of pre-built 10,000-row batches
 * over HTTP to the same private clickhouse-server. The stages run ingest-pipeline's strategies (a private
 * redis-server for the two Redis strategies, the embedded broker for the journal strategy).
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
    private static final String MISSING = "ingest-pipeline's strategies are not available in this build";

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
        int stageRows = o.quick() ? Math.min(rows, 5_000) : rows;
        int[] events = {o.size(2_000, 100), o.size(10_000, 500), stageRows, stageRows, stageRows, stageRows};
        notes.add("Rows: `" + RowBinaryBatch.COLUMNS + "` in a MergeTree table, ~150-byte JSON events for the strategies "
                + "(JSON passthrough, `FORMAT JSONEachRow`). Stage runs: a fresh table per run; events per run: sync "
                + String.format("%,d", events[0]) + ", async " + String.format("%,d", events[1]) + ", the others "
                + String.format("%,d", stageRows) + ".");
        notes.add("Load: one client thread, at most " + SluiceIngestLoads.WINDOW + " requests in flight (sync blocks: 1; the reference had ~50 in flight "
                + "for coalescing and 2,400–4,800 for its Redis stages, by Little's law). "
                + "Throughput and latency are per request until the strategy confirms it, as the reference measured them "
                + "(sync: row inserted; async: server accepted; coalescing: batch landed; Redis strategies: XADD "
                + "acknowledged; journal: Sluice journal acknowledged). Landed rows/s is counted in ClickHouse, from the "
                + "first request until the last row is queryable; acknowledged→queryable is the time from the last "
                + "confirmation until every row is queryable. Strategy settings: ingest-pipeline's defaults (batches of "
                + "10,000 rows, 50 ms linger, 2 inserts in flight, 2 workers), async with 16 inserts in flight.");
        notes.add("Raw ceiling: one thread sends pre-built RowBinary bodies of " + String.format("%,d", BATCH) + " rows "
                + "as `INSERT INTO " + TABLE + " FORMAT RowBinary` over HTTP to the same server; " + String.format("%,d", batches * BATCH)
                + " rows per run, counted in ClickHouse after each run. A row is queryable when its INSERT returns "
                + "(synchronous MergeTree insert), so ingest→queryable latency = batch insert latency.");
        if (ClickHouseServer.binary() == null) {
            notes.add("Not available: no clickhouse-server on this machine (" + ClickHouseServer.DEFAULT_BINARY + ").");
            return new ScenarioResult(name(), title(), reference(), tables, charts, notes, 0);
        }
        List<Run> raw;
        List<Long> landed = new ArrayList<>();
        List<List<SluiceIngestLoads.StageRun>> stageRuns = new ArrayList<>();
        String stageMissing = null;
        try (ClickHouseServer ch = ClickHouseServer.start(o.workDir());
             RedisServer redis = RedisServer.binary() == null ? null : RedisServer.start(o.workDir());
             TempDir dir = new TempDir(o.workDir(), "sluice-bench-ingest")) {
            notes.add("clickhouse-server " + ch.query("SELECT version()") + " on 127.0.0.1:" + ch.httpPort()
                    + (redis == null ? "; no redis-server (Redis stages not available)" : "; private redis-server on 127.0.0.1:" + redis.port()) + ".");
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
            ch.query("DROP TABLE " + TABLE);
            Broker broker = SluiceBroker.open(dir.resolve("broker"), o, 16_384, new String[1]);
            try {
                for (int s = 0; s < STAGES.length; s++) {
                    stageRuns.add(stage(o, ch, redis, broker, s, events[s]));
                }
            } catch (NoClassDefFoundError e) {
                stageMissing = MISSING + " (" + e.getMessage() + ")";
            } finally {
                if (broker != null) {
                    broker.close();
                }
            }
        }
        if (stageMissing != null) {
            notes.add("Stage rows: " + stageMissing + ".");
        }
        long expected = (long) batches * BATCH;
        long lost = landed.stream().filter(c -> c != expected).count();
        notes.add("Every raw run landed " + (lost == 0 ? "exactly " + String.format("%,d", expected) + " rows"
                : "a different count in " + lost + " run(s): " + landed) + "; every stage run landed exactly its events "
                + "(the run fails on a missing or duplicate row).");
        return result(o, notes, tables, charts, raw, stageRuns);
    }

    /** Warm-up and measured runs of one stage; null when its prerequisites are missing. */
    private List<SluiceIngestLoads.StageRun> stage(BenchOptions o, ClickHouseServer ch, RedisServer redis, Broker broker,
                                                  int s, int events) throws Exception {
        Strategy strategy = Strategy.values()[s];
        if ((strategy.usesRedis() && redis == null) || (strategy == Strategy.JOURNAL && broker == null)) {
            return null;
        }
        List<SluiceIngestLoads.StageRun> runs = new ArrayList<>();
        for (int i = 0; i < o.warmups() + o.iterations(); i++) {
            String table = "bench.s" + (s + 1) + "_" + strategy.configName().replace('-', '_') + "_" + i;
            SluiceIngestLoads.createTable(ch, table);
            IngestConfig.Builder config = SluiceIngestLoads.config(ch, table, strategy);
            if (strategy == Strategy.ASYNC) {
                config.maxInFlight(16);
            }
            if (strategy.usesRedis()) {
                config.redisUrl(redis.uri()).redisStream("bench:" + table);
            }
            int n = i < o.warmups() ? Math.max(100, events / 5) : events;
            SluiceIngestLoads.StageRun r = strategy == Strategy.JOURNAL
                    ? SluiceIngestLoads.journal(ch, broker, config.topic("ingest-" + i).build(), i, n)
                    : SluiceIngestLoads.sink(ch, config.build(), i, n);
            if (i >= o.warmups()) {
                runs.add(r);
            }
            ch.query("DROP TABLE IF EXISTS " + table);
        }
        return runs;
    }

    private ScenarioResult result(BenchOptions o, List<String> notes, List<Table> tables, List<Chart> charts, List<Run> raw,
                                  List<List<SluiceIngestLoads.StageRun>> stageRuns) {
        Table.Builder stages = Table.builder("The reference's stage table (+ Sluice's journal strategy)", "— (see the raw ceiling below)");
        BarChart bars = new BarChart("ingest-stages-throughput.svg", "ingest-stages: rows/s landed in ClickHouse (reference: its req/s)", "rows/s",
                List.of("Sluice (landed rows/s)", "raw RowBinary ceiling", "reference (req/s)"));
        Double ceiling = Repeat.median(raw, Run::perSecond);
        for (int s = 0; s < STAGES.length; s++) {
            List<SluiceIngestLoads.StageRun> r = s < stageRuns.size() ? stageRuns.get(s) : null;
            String why = s < stageRuns.size() ? (Strategy.values()[s].usesRedis() ? "no redis-server" : "no embedded broker") : MISSING;
            Double ref = Double.isNaN(REF[s][0]) ? null : REF[s][0];
            stages.row(STAGES[s] + " throughput", "req/s", Better.HIGHER, stage(r, SluiceIngestLoads.StageRun::requestsPerSecond), null, ref, r == null ? why : null);
            stages.row(STAGES[s] + " avg latency", "ms", Better.LOWER, stage(r, x -> x.latency().getMean() / 1e6), null, Double.isNaN(REF[s][1]) ? null : REF[s][1], null);
            stages.row(STAGES[s] + " P99 latency", "ms", Better.LOWER, stage(r, x -> x.latency().getValueAtPercentile(99) / 1e6), null, Double.isNaN(REF[s][2]) ? null : REF[s][2], null);
            stages.row(STAGES[s] + " landed rows/s", "rows/s", Better.HIGHER, stage(r, SluiceIngestLoads.StageRun::landedPerSecond), null, null,
                    s == 0 ? "counted in ClickHouse (the reference did not measure it)" : null);
            if (s >= 2 && ceiling != null) {
                stages.row(STAGES[s] + " landed / raw ceiling", "%", Better.HIGHER, stage(r, x -> 100.0 * x.landedPerSecond() / ceiling), null, null,
                        s == 2 ? "goal for coalescing, worker pool and journal: ≥ 50%" : null);
            }
            stages.row(STAGES[s] + " acknowledged→queryable", "ms", Better.LOWER, stage(r, SluiceIngestLoads.StageRun::queryableMillis), null, null, null);
            stages.row(STAGES[s] + " heap retained", "MiB", Better.LOWER, stage(r, SluiceIngestLoads.StageRun::heapRetainedMiB), null, Double.isNaN(REF[s][3]) ? null : REF[s][3],
                    s == 0 ? "whole benchmark JVM after a full GC, all rows landed, strategy still open" : null);
            stages.row(STAGES[s] + " peak heap", "MiB", Better.LOWER, stage(r, SluiceIngestLoads.StageRun::heapPeakMiB), null, null,
                    s == 0 ? "whole benchmark JVM, sampled, garbage included" : null);
            io.sluice.bench.report.Sample landedSample = stage(r, SluiceIngestLoads.StageRun::landedPerSecond);
            bars.category(STAGES[s], landedSample == null ? null : landedSample.median(), ceiling, ref);
        }
        tables.add(stages.build());
        Table.Builder ceilingTable = Table.builder("Raw ceiling: pre-built RowBinary batches of 10,000 rows, one inserter",
                "plain HTTP `INSERT … FORMAT RowBinary`");
        ceilingTable.row("Landed rows/s (counted in ClickHouse)", "rows/s", Better.HIGHER, null, Repeat.sample(raw, Run::perSecond), null, null);
        ceilingTable.row("Batch insert avg = ingest→queryable avg", "ms", Better.LOWER, null, Repeat.sample(raw, r -> r.latency().getMean() / 1e6), null, null);
        ceilingTable.row("Batch insert P99 = ingest→queryable P99", "ms", Better.LOWER, null, Repeat.sample(raw, r -> r.latency().getValueAtPercentile(99) / 1e6), null, null);
        tables.add(ceilingTable.build());
        charts.add(bars);
        return new ScenarioResult(name(), title(), reference(), tables, charts, notes, 0);
    }

    private static io.sluice.bench.report.Sample stage(List<SluiceIngestLoads.StageRun> runs,
                                                       java.util.function.ToDoubleFunction<SluiceIngestLoads.StageRun> f) {
        if (runs == null || runs.isEmpty()) {
            return null;
        }
        return io.sluice.bench.report.Sample.of(runs.stream().map(r -> f.applyAsDouble(r)).toList());
    }
}
