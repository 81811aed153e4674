package io.sluice.bench.scenario;

import io.sluice.bench.BenchOptions;
import io.sluice.bench.Scenario;
import io.sluice.bench.internal.CpuTime;
import io.sluice.bench.report.Better;
import io.sluice.bench.report.Row;
import io.sluice.bench.report.Goal;
import io.sluice.bench.report.Sample;
import io.sluice.bench.report.ScenarioResult;
import io.sluice.bench.report.Table;
import io.sluice.bench.report.chart.BarChart;
import io.sluice.bench.report.chart.Chart;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.RedisServer;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.Strategy;
import io.sluice.bench.ingest.IngestStageRunner;
import io.sluice.bench.ingest.IngestStageRunner.StageResult;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;
import java.util.function.UnaryOperator;

/**
 * Reproduces {@code 003_dc9b03795dfe9344.txt}: the five ingestion stages into ClickHouse plus Sluice's journal
 * strategy, beside the raw ceiling measured in the same run on the same private clickhouse-server: plain INSERTs of
 * pre-built 10,000-row batches. Each stage run is ingest-pipeline's {@link IngestStageRunner} (one producer thread;
 * latency until the strategy confirms a write; rows counted in ClickHouse; per-event ingest→queryable latency from
 * {@code max(id)} polls every 10 ms); this scenario repeats it (warm-ups, then measured runs) and reports medians
 * and spreads.
 */
public final class IngestStagesScenario implements Scenario {
    private static final String[] STAGES = {"01 sync insert", "02 async insert (fire-and-forget)", "03 coalescing",
            "04 Redis-stream buffer", "05 worker pool", "06 journal (Sluice)"};
    /** Measured runs per stage at most (the header of the report says so). */
    public static final int MAX_ITERATIONS = 3;

    /** Why a stage's throughput is not the reference's: another unit. */
    static final String THROUGHPUT_NOT_COMPARABLE = "in-process write() calls per second into the strategy; the reference "
            + "counted HTTP requests per second into its service (Sluice's HTTP figure is the endpoint table below)";
    /** Why the Redis stage's figures are not the reference's: another batching. */
    static final String REDIS_BATCH_NOT_COMPARABLE = "Sluice's Redis-stream buffer packs up to 256 events per XADD; the "
            + "reference sent one XADD per request";
    static final String HEAP_NOT_COMPARABLE = "the whole benchmark JVM's heap under -Xms1g, sampled every 10 ms with no GC "
            + "before the run (garbage, earlier runs' included); the reference's figure is its Node.js process's heap";

    /** Reference: throughput req/s, avg ms, P99 ms, heap MB; NaN where the reference has no such stage. */
    private static final double[][] REF = {
            {116.41, 8.59, 12.95, 18.48}, {953.14, 0.05, 0.13, 90.39}, {2_465.15, 19.52, 23.67, 11.21},
            {17_920.09, 135.96, 137.19, 21.14}, {34_040.14, 141.12, 142.7, 29.7}, {Double.NaN, Double.NaN, Double.NaN, Double.NaN}};
    private static final int BATCH_ROWS = 10_000;

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
        int big = Integer.parseInt(o.extra().getOrDefault("rows", Integer.toString(o.size(200_000, 5_000))));
        int warm = o.quick() ? 1_000 : Math.max(10_000, big / 10);
        int iterations = Math.min(o.iterations(), MAX_ITERATIONS);
        int[] events = {o.size(500, 100), o.size(10_000, 500), big, big, big, big};
        int ceilingBatches = o.size(30, 3);
        notes.add("Rows `{\"id\":i,\"name\":\"n<i>\",\"value\":3i}` into `(id UInt64, name String, value Int64) MergeTree` "
                + "(the journal table adds `_sluice_partition`, `_sluice_offset` for exactly-once), JSON passthrough. Events per "
                + "run: sync " + String.format("%,d", events[0]) + ", async " + String.format("%,d", events[1]) + ", the others "
                + String.format("%,d", big) + "; " + o.warmups() + " warm-up run(s) of " + String.format("%,d", warm)
                + " events (sync/async: their own size), then " + iterations + " measured runs per stage.");
        notes.add("Per run (ingest-pipeline's `IngestStageRunner`): one producer thread writes as fast as the strategy accepts "
                + "(back-pressure = retry); latency = write until the strategy confirms it (sync: inserted; async: accepted "
                + "by the server; coalescing: batch landed; Redis strategies: XADD acknowledged; journal: Sluice journal "
                + "acknowledged), as the reference measured; landed rows/s = events / time until the last row is counted in "
                + "ClickHouse; ingest→queryable = per event, from its write until a `max(id)` poll (every 10 ms) sees it. "
                + "Settings: batches of 10,000 rows, 20 ms linger, 2 inserts in flight, 2 workers, 2 journal partitions; "
                + "async: 32 in flight (18.16 has no async_insert: a Buffer table in front).");
        notes.add("Raw ceiling: the same rows pre-built into " + String.format("%,d", BATCH_ROWS) + "-row bodies, "
                + ceilingBatches + " INSERTs one at a time over HTTP (RowBinary, and JSONEachRow as the JSON strategies send).");
        if (!ClickHouseServer.isInstalled() || !RedisServer.isInstalled()) {
            notes.add("Not available: needs clickhouse-server and redis-server installed (scripts/test.sh installs them).");
            return new ScenarioResult(name(), title(), reference(), tables, charts, notes, 0);
        }
        List<Double> rowBinary = new ArrayList<>();
        List<Double> jsonEachRow = new ArrayList<>();
        List<Cpu> rowBinaryCpu = new ArrayList<>();
        List<Cpu> jsonEachRowCpu = new ArrayList<>();
        List<List<Measured>> stages = new ArrayList<>();
        try (ClickHouseServer ch = ClickHouseServer.startPrivate(o.workDir());
             RedisServer redis = RedisServer.startPrivate(o.workDir(), false)) {
            notes.add("clickhouse-server " + ch.query("SELECT version()").strip() + " at " + ch.url()
                    + ", redis-server at " + redis.url() + ", both private to this run.");
            IngestStageRunner runner = new IngestStageRunner(new IngestStageRunner.Target(ch.url(), redis.url(), "sluice_bench"));
            Meter meter = new Meter(ch.pid(), redis.pid());
            notes.add(CpuRows.WHAT + " Here a run is one `IngestStageRunner` call: its table set-up, the producer thread, "
                    + "the strategy's threads (and, for the journal, an embedded broker opened and closed in the run), the "
                    + "`max(id)` prober and heap sampler, and the final exact-count check. ClickHouse's own CPU (clickhouse-server "
                    + "pid " + ch.pid() + ", /proc utime + stime, 10 ms ticks, background merges included) and, for the Redis "
                    + "strategies, redis-server's are separate rows, per M events of the run. The raw ceiling's CPU rows divide "
                    + "by the rows of the call including its one warm-up INSERT; the body is built in the call too.");
            runner.rawCeiling(true, 1, BATCH_ROWS);
            long ceilingRows = (long) (ceilingBatches + 1) * BATCH_ROWS;
            for (int i = 0; i < iterations; i++) {
                Cpu.Start c0 = meter.start();
                rowBinary.add(runner.rawCeiling(true, ceilingBatches, BATCH_ROWS));
                rowBinaryCpu.add(c0.perMillion(ceilingRows));
                Cpu.Start c1 = meter.start();
                jsonEachRow.add(runner.rawCeiling(false, ceilingBatches, BATCH_ROWS));
                jsonEachRowCpu.add(c1.perMillion(ceilingRows));
            }
            UnaryOperator<IngestConfig.Builder> batching = b -> b.batchRows(BATCH_ROWS).lingerMs(20).maxInFlight(2);
            stages.add(repeat(meter, o, iterations, events[0], () -> runner.runSink(STAGES[0], Strategy.SYNC, events[0], b -> b)));
            stages.add(repeat(meter, o, iterations, events[1], () -> runner.runSink(STAGES[1], Strategy.ASYNC, events[1], b -> b.maxInFlight(32))));
            stages.add(repeat(meter, o, iterations, warm, n -> runner.runSink(STAGES[2], Strategy.COALESCING, n, batching), big));
            stages.add(repeat(meter, o, iterations, warm, n -> runner.runSink(STAGES[3], Strategy.REDIS_STREAM, n, batching), big));
            stages.add(repeat(meter, o, iterations, warm, n -> runner.runSink(STAGES[4], Strategy.WORKER_POOL, n, b -> batching.apply(b).workers(2)), big));
            stages.add(repeat(meter, o, iterations, warm, n -> runner.runJournal(STAGES[5], n, 2, batching), big));
        }
        List<Double> httpCpu = new ArrayList<>();
        List<WrkHttpLoad.Result> http = http(o, notes, httpCpu);
        notes.add("Every run landed exactly its events: after the last row, `count()` = `uniqExact(id)` = events and the ids are "
                + "0..events−1 (the runner fails the run otherwise: no loss, no duplicate).");
        ScenarioResult r = result(tables, charts, notes, stages, Sample.of(rowBinary), Sample.of(jsonEachRow), rowBinaryCpu, jsonEachRowCpu);
        if (http != null) {
            List<Table> all = new ArrayList<>(r.tables());
            Table.Builder h = Table.builder("Sluice's HTTP endpoint, one event per request from wrk (" + WrkHttpLoad.THREADS
                    + " threads, " + WrkHttpLoad.CONNECTIONS + " keep-alive connections), acks=journal", "— (no raw baseline)");
            h.row(new Row("requests/s", "req/s", Better.HIGHER, Sample.of(WrkHttpLoad.field(http, WrkHttpLoad.Result::requestsPerSec)), null, null,
                    "each answer after the event is in the journal").withGoal(Goal.absolute(60_000)));
            h.row("avg latency", "ms", Better.LOWER, Sample.of(WrkHttpLoad.field(http, WrkHttpLoad.Result::avgMs)), null, null, "as wrk reports it");
            h.row("P50 latency", "ms", Better.LOWER, Sample.of(WrkHttpLoad.field(http, WrkHttpLoad.Result::p50Ms)), null, null, null);
            h.row("P99 latency", "ms", Better.LOWER, Sample.of(WrkHttpLoad.field(http, WrkHttpLoad.Result::p99Ms)), null, null, null);
            CpuRows.add(h, "JVM ", "s per M requests", Sample.of(httpCpu), null,
                    "the benchmark JVM (HTTP endpoint and broker; nothing else runs in it meanwhile) per request wrk completed; "
                    + "wrk's own CPU is not included");
            all.add(h.build());
            return new ScenarioResult(r.scenario(), r.title(), r.reference(), all, r.charts(), r.notes(), r.elapsedSeconds());
        }
        return r;
    }

    /**
     * The wrk runs (a warm-up, then measured runs), or null with a note when wrk is not installed; the JVM's CPU s per
     * M requests of each measured run goes to {@code cpuPerMillion}.
     */
    private static List<WrkHttpLoad.Result> http(BenchOptions o, List<String> notes, List<Double> cpuPerMillion) throws Exception {
        if (!WrkHttpLoad.available()) {
            notes.add("HTTP one event per request: not measured, `wrk` is not installed (Debian package `wrk`; scripts/test.sh installs it).");
            return null;
        }
        int seconds = o.quick() ? 1 : 5;
        notes.add("HTTP one event per request: `" + WrkHttpLoad.command(seconds) + "` against an embedded broker (2 partitions) "
                + "and its HTTP endpoint in this JVM; wrk runs in its own process on the same 2 cores. "
                + o.warmups() + " warm-up run(s), then " + o.iterations() + " measured runs; each run is checked: no socket error, "
                + "no non-2xx answer, and the journal grew by at least the requests wrk completed.");
        List<WrkHttpLoad.Result> runs = new ArrayList<>();
        try (io.sluice.bench.internal.TempDir dir = new io.sluice.bench.internal.TempDir(o.workDir(), "sluice-bench-http");
             WrkHttpLoad load = new WrkHttpLoad(dir.path())) {
            for (int i = 0; i < o.warmups(); i++) {
                load.run(seconds, false);
            }
            for (int i = 0; i < o.iterations(); i++) {
                CpuTime.Mark before = CpuTime.mark();
                WrkHttpLoad.Result r = load.run(seconds, true);
                cpuPerMillion.add(CpuTime.perMillion(before.seconds(), r.requests()));
                runs.add(r);
            }
        }
        return runs;
    }

    @FunctionalInterface
    private interface StageRun {
        StageResult run(int events);
    }

    /** CPU seconds per million events of one run: this JVM, clickhouse-server, redis-server. */
    private record Cpu(double jvm, double clickHouse, double redis) {
        /** The CPU counters at the start of a run. */
        record Start(Meter meter, CpuTime.Mark jvm, double clickHouse, double redis) {
            Cpu perMillion(long events) {
                return new Cpu(CpuTime.perMillion(jvm.seconds(), events),
                        CpuTime.perMillion(CpuTime.processSeconds(meter.clickHousePid) - clickHouse, events),
                        CpuTime.perMillion(CpuTime.processSeconds(meter.redisPid) - redis, events));
            }
        }
    }

    /** Reads the CPU counters of this JVM and of the private servers. */
    private record Meter(long clickHousePid, long redisPid) {
        Cpu.Start start() {
            return new Cpu.Start(this, CpuTime.mark(), CpuTime.processSeconds(clickHousePid), CpuTime.processSeconds(redisPid));
        }
    }

    /** One measured stage run with the CPU it took. */
    private record Measured(StageResult result, Cpu cpu) {
    }

    /** Same-size warm-ups (small stages). */
    private static List<Measured> repeat(Meter meter, BenchOptions o, int iterations, int events, java.util.function.Supplier<StageResult> run) {
        return repeat(meter, o, iterations, events, n -> run.get(), events);
    }

    private static List<Measured> repeat(Meter meter, BenchOptions o, int iterations, int warmEvents, StageRun run, int events) {
        for (int i = 0; i < o.warmups(); i++) {
            run.run(warmEvents);
        }
        List<Measured> measured = new ArrayList<>();
        for (int i = 0; i < iterations; i++) {
            Cpu.Start c = meter.start();
            StageResult r = run.run(events);
            measured.add(new Measured(r, c.perMillion(events)));
        }
        return measured;
    }

    private ScenarioResult result(List<Table> tables, List<Chart> charts, List<String> notes, List<List<Measured>> stages,
                                  Sample rowBinary, Sample jsonEachRow, List<Cpu> rowBinaryCpu, List<Cpu> jsonEachRowCpu) {
        Table.Builder t = Table.builder("The reference's stage table (+ Sluice's journal strategy)", "— (the raw ceiling is below)");
        BarChart bars = new BarChart("ingest-stages-throughput.svg", "ingest-stages: landed rows/s (Sluice) vs the reference's req/s", "rows/s",
                List.of("Sluice landed rows/s", "raw RowBinary ceiling", "reference req/s"));
        double ceiling = rowBinary.median();
        double jsonCeiling = jsonEachRow.median();
        for (int s = 0; s < STAGES.length; s++) {
            List<Measured> m = stages.get(s);
            List<StageResult> r = m.stream().map(Measured::result).toList();
            Double ref = Double.isNaN(REF[s][0]) ? null : REF[s][0];
            t.row(new Row(STAGES[s] + " throughput", "writes/s", Better.HIGHER, sample(r, StageResult::throughputPerSec), null, ref,
                    s == 0 ? "until the strategy confirms each write" : null).notComparable(s == 3
                    ? THROUGHPUT_NOT_COMPARABLE + "; " + REDIS_BATCH_NOT_COMPARABLE : THROUGHPUT_NOT_COMPARABLE));
            Row avg = new Row(STAGES[s] + " avg latency", "ms", Better.LOWER, sample(r, StageResult::avgLatencyMs), null, nan(REF[s][1]), null);
            Row p99 = new Row(STAGES[s] + " P99 latency", "ms", Better.LOWER, sample(r, StageResult::p99LatencyMs), null, nan(REF[s][2]), null);
            t.row(s == 3 ? avg.notComparable(REDIS_BATCH_NOT_COMPARABLE) : avg);
            t.row(s == 3 ? p99.notComparable(REDIS_BATCH_NOT_COMPARABLE) : p99);
            t.row(STAGES[s] + " landed rows/s", "rows/s", Better.HIGHER, sample(r, StageResult::landedRowsPerSec), null, null,
                    s == 0 ? "counted in ClickHouse (the reference did not measure it)" : null);
            if (s >= 2) {
                // Issue 4 set coalescing's and the worker pool's goal against the RowBinary ceiling; issues 12 and 22 set
                // the journal's (offset-range) against the ceiling of the format it sends: every stage here sends
                // JSONEachRow (JSON passthrough), so both shares are shown and each goal sits on its own row
                Row share = new Row(STAGES[s] + " landed / raw RowBinary ceiling", "%", Better.HIGHER,
                        sample(r, x -> 100.0 * x.landedRowsPerSec() / ceiling), null, null,
                        s == 2 ? "goal for coalescing and worker pool: ≥ 50% (issue 4)" : null);
                t.row(s == 2 || s == 4 ? share.withGoal(Goal.absolute(50)) : share);
                Row sameFormat = new Row(STAGES[s] + " landed / raw JSONEachRow ceiling (the format it sends)", "%",
                        Better.HIGHER, sample(r, x -> 100.0 * x.landedRowsPerSec() / jsonCeiling), null, null,
                        s == 5 ? "goal for the journal (offset-range, exactly-once): ≥ 50% of the same format's ceiling (issues 12, 22)" : null);
                t.row(s == 5 ? sameFormat.withGoal(Goal.absolute(50)) : sameFormat);
            }
            t.row(STAGES[s] + " ingest→queryable P50", "ms", Better.LOWER, sample(r, StageResult::queryableP50Ms), null, null, null);
            t.row(STAGES[s] + " ingest→queryable P99", "ms", Better.LOWER, sample(r, StageResult::queryableP99Ms), null, null, null);
            t.row(new Row(STAGES[s] + " peak heap", "MiB", Better.LOWER, sample(r, StageResult::peakHeapMb), null, nan(REF[s][3]),
                    s == 0 ? "whole benchmark JVM, sampled every 10 ms (garbage included)" : null).notComparable(HEAP_NOT_COMPARABLE));
            CpuRows.add(t, STAGES[s] + " JVM ", cpu(m, Cpu::jvm), null,
                    s == 0 ? "whole benchmark JVM over the run, producer thread and prober included (see the notes)" : null);
            CpuRows.add(t, STAGES[s] + " clickhouse-server ", cpu(m, Cpu::clickHouse), null,
                    s == 0 ? "the private clickhouse-server over the run" : null);
            if (s == 3 || s == 4) {
                CpuRows.add(t, STAGES[s] + " redis-server ", cpu(m, Cpu::redis), null, s == 3 ? "the private redis-server over the run" : null);
            }
            Sample landed = sample(r, StageResult::landedRowsPerSec);
            bars.category(STAGES[s], landed == null ? null : landed.median(), ceiling, ref);
        }
        tables.add(t.build());
        Table.Builder c = Table.builder("Raw ceiling: pre-built 10,000-row batches, one INSERT at a time", "plain HTTP INSERT");
        c.row("RowBinary rows/s", "rows/s", Better.HIGHER, null, rowBinary, null, "the reference's best stage did 34,040 req/s");
        c.row("JSONEachRow rows/s", "rows/s", Better.HIGHER, null, jsonEachRow, null, "the format the JSON strategies send");
        CpuRows.add(c, "RowBinary JVM ", "s per M rows", null, Sample.of(rowBinaryCpu.stream().map(Cpu::jvm).toList()), "the inserting client");
        CpuRows.add(c, "RowBinary clickhouse-server ", "s per M rows", null, Sample.of(rowBinaryCpu.stream().map(Cpu::clickHouse).toList()), null);
        CpuRows.add(c, "JSONEachRow JVM ", "s per M rows", null, Sample.of(jsonEachRowCpu.stream().map(Cpu::jvm).toList()), null);
        CpuRows.add(c, "JSONEachRow clickhouse-server ", "s per M rows", null, Sample.of(jsonEachRowCpu.stream().map(Cpu::clickHouse).toList()), null);
        tables.add(c.build());
        charts.add(bars);
        return new ScenarioResult(name(), title(), reference(), tables, charts, notes, 0);
    }

    private static Double nan(double v) {
        return Double.isNaN(v) ? null : v;
    }

    private static Sample cpu(List<Measured> runs, ToDoubleFunction<Cpu> f) {
        return Sample.of(runs.stream().map(m -> f.applyAsDouble(m.cpu())).toList());
    }

    private static Sample sample(List<StageResult> runs, ToDoubleFunction<StageResult> f) {
        if (runs == null || runs.isEmpty()) {
            return null;
        }
        return Sample.of(runs.stream().map(r -> f.applyAsDouble(r)).toList());
    }
}
