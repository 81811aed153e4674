package io.sluice.bench.scenario;

import io.sluice.bench.BenchOptions;
import io.sluice.bench.Scenario;
import io.sluice.bench.report.Better;
import io.sluice.bench.report.Goal;
import io.sluice.bench.report.Row;
import io.sluice.bench.report.Sample;
import io.sluice.bench.report.ScenarioResult;
import io.sluice.bench.report.Table;
import io.sluice.bench.report.chart.BarChart;
import io.sluice.bench.report.chart.Chart;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Runs the JMH microbenchmarks (BusPublishBenchmark, JournalAppendBenchmark, NetworkProduceBenchmark) through JMH's
 * own runner — forks, warm-up and measurement iterations, the GC profiler — and turns their per-iteration scores
 * into report rows (median and spread over the measured iterations). The JSON JMH writes is kept next to the report.
 */
public final class MicroBenchmarksScenario implements Scenario {

    /** Forks of the spread run (issue 22: the memory-only publish's spread over 3 forks ≤ 20%). */
    private static final int SPREAD_FORKS = 3;

    @Override
    public String name() {
        return "jmh";
    }

    @Override
    public String title() {
        return "JMH microbenchmarks: bus publish, journal append, network round trip";
    }

    @Override
    public String reference() {
        return "001_8bf29e2983b20e26.txt (storage write, network RTT)";
    }

    @Override
    public ScenarioResult run(BenchOptions o) throws Exception {
        List<String> notes = new ArrayList<>();
        List<Table> tables = new ArrayList<>();
        List<Chart> charts = new ArrayList<>();
        int warmups = o.quick() ? 1 : 3;
        int iterations = o.quick() ? 2 : 5;
        TimeValue time = o.quick() ? TimeValue.milliseconds(300) : TimeValue.seconds(2);
        Files.createDirectories(o.resultsDir());
        String json = o.resultsDir().resolve("jmh.json").toString();
        notes.add("JMH 1.37, 1 fork per benchmark with the Chronicle flags, " + warmups + " warm-up and " + iterations
                + " measured iterations of " + time + ", GC profiler on; cells are the median [min–max] of the measured "
                + "iterations. Raw JSON: `jmh.json` next to this report. Run one on its own with "
                + "`java -jar jmh-benchmarks/target/benchmarks.jar BusPublishBenchmark -prof gc -rf json`.");
        notes.add("Wait strategy " + o.waitStrategy() + " (the harness's `--wait-strategy`, as in the header) for Sluice's "
                + "broker and the raw Disruptor ring in every benchmark (JMH parameter `waitStrategy`).");
        notes.add("One figure per quantity: the reference's network round trip (54.55 µs P50) and storage write (138,764 msg/s) "
                + "are compared in the stream-processor scenario (tables 3 and 7); the JMH rows here measure the same "
                + "operations another way (JMH sample time or throughput in a forked JVM) and are set against their same-run "
                + "baselines and goals only.");
        notes.add("CPU seconds per million events are not measured here: each benchmark runs in a JMH fork (its own JVM, "
                + "warm-up and harness threads included), and no profiler in this run reports CPU time; the per-operation "
                + "figure JMH gives is allocation (`gc.alloc.rate.norm`, B/op, from `-prof gc`). The CPU rows are in the "
                + "event-bus, stream-processor and ingest-stages scenarios (process CPU of the benchmark JVM per measured run) "
                + "and kafka-peer (the broker's and the load tool's JVMs).");
        ChainedOptionsBuilder opts = new OptionsBuilder()
                .include("io.sluice.bench.(BusPublishBenchmark|JournalAppendBenchmark|NetworkProduceBenchmark)")
                .warmupIterations(warmups).measurementIterations(iterations)
                .warmupTime(time).measurementTime(time).forks(1)
                .param("waitStrategy", o.waitStrategy().name())
                .addProfiler(GCProfiler.class)
                .resultFormat(ResultFormatType.JSON).result(json)
                .verbosity(VerboseMode.SILENT);
        Collection<RunResult> results = new Runner(opts.build()).run();
        // issue 22: the memory-only publish's spread over 3 forks (each fork its own JVM, JIT and thread placement)
        Collection<RunResult> forked = new Runner(new OptionsBuilder()
                .include("io.sluice.bench.BusPublishBenchmark.oneProducer$")
                .warmupIterations(warmups).measurementIterations(iterations)
                .warmupTime(time).measurementTime(time).forks(SPREAD_FORKS)
                .param("waitStrategy", o.waitStrategy().name())
                .param("target", "sluice-memory", "raw-disruptor")
                .verbosity(VerboseMode.SILENT).build()).run();
        notes.add("The memory-only publish's spread: `BusPublishBenchmark.oneProducer` run again for the memory-only topic "
                + "and the raw ring, " + SPREAD_FORKS + " forks each (same iterations), after the run above; the row is "
                + "the largest fork's median score over the smallest's, minus 1 (issue 22: at most 20%). Its scores are "
                + "not in the rate rows (one figure per quantity).");

        Table.Builder bus = Table.builder("BusPublishBenchmark: publish → in-process subscriber, ring 16,384, 64 B events",
                "raw multi-producer Disruptor RingBuffer, same size, one BatchEventProcessor");
        BarChart bars = new BarChart("jmh-bus-publish.svg", "BusPublishBenchmark: events/s through the bus", "events/s",
                List.of("Sluice memory-only topic", "Sluice journaled topic", "raw Disruptor"));
        for (String method : new String[]{"oneProducer", "fourProducers"}) {
            String label = method.equals("oneProducer") ? "1 producer" : "4 producers";
            Sample memory = score(results, "BusPublishBenchmark." + method, "target", "sluice-memory");
            Sample journal = score(results, "BusPublishBenchmark." + method, "target", "sluice-journal");
            Sample raw = score(results, "BusPublishBenchmark." + method, "target", "raw-disruptor");
            Row memoryRow = new Row(label + ", memory-only topic", "events/s", Better.HIGHER, memory, raw, null, null);
            bus.row(method.equals("oneProducer") ? memoryRow.withGoal(Goal.absolute(10_000_000)).withGoal(Goal.timesBaseline(0.5)) : memoryRow);
            if (method.equals("oneProducer")) {
                bus.row(new Row(label + ", memory-only topic: spread over " + SPREAD_FORKS + " forks", "%", Better.LOWER,
                        forkSpread(forked, "sluice-memory"), forkSpread(forked, "raw-disruptor"), null,
                        "largest fork median / smallest − 1, from the " + SPREAD_FORKS + "-fork run (see the notes)")
                        .withGoal(Goal.absolute(20)));
            }
            bus.row(label + ", journaled topic", "events/s", Better.HIGHER, journal, raw, null, null);
            Row allocated = new Row(label + ", memory-only: allocated", "B/op", Better.LOWER,
                    secondary(results, "BusPublishBenchmark." + method, "sluice-memory", "gc.alloc.rate.norm"),
                    secondary(results, "BusPublishBenchmark." + method, "raw-disruptor", "gc.alloc.rate.norm"), null,
                    method.equals("oneProducer") ? "whole process per accepted event (-prof gc); goal ~0 (≤ 1 B/op)" : null);
            bus.row(method.equals("oneProducer") ? allocated.withGoal(Goal.absolute(1)) : allocated);
            bus.row(label + ", journaled: allocated", "B/op", Better.LOWER,
                    secondary(results, "BusPublishBenchmark." + method, "sluice-journal", "gc.alloc.rate.norm"), null, null, null);
            bars.category(label, median(memory), median(journal), median(raw));
        }
        tables.add(bus.build());
        charts.add(bars);

        Table.Builder journal = Table.builder("JournalAppendBenchmark: journaled publish (acks=JOURNAL), one producer thread",
                "raw Chronicle Queue appends of the same bytes from the benchmark thread: one document per event, or per "
                        + "64 KiB batch beside the batching producer; fresh pages are faulted in on that thread (open-source "
                        + "Chronicle has no pretoucher), where Sluice's sluice-pretouch thread reads ahead (journal.pretouch.bytes)");
        for (String size : new String[]{"100", "1024"}) {
            Sample s = score(results, "JournalAppendBenchmark.append", "size", size, "target", "sluice");
            Sample r = score(results, "JournalAppendBenchmark.append", "size", size, "target", "raw-chronicle");
            Row one = new Row(size + " B events, one ring slot each", "msg/s", Better.HIGHER, s, r, null,
                    "baseline: one raw document per event" + (size.equals("1024")
                            ? "; against the reference's storage write see stream-processor table 7 (goal ≥ 3× it: 416,292)" : ""))
                    .withGoal(Goal.timesBaseline(1.0));
            journal.row(size.equals("1024") ? one.withGoal(Goal.absolute(416_292)) : one);
            Sample b = score(results, "JournalAppendBenchmark.append", "size", size, "target", "sluice-batched");
            Sample rb = score(results, "JournalAppendBenchmark.append", "size", size, "target", "raw-chronicle-batched");
            journal.row(new Row(size + " B events, producer batching (linger 1 ms)", "msg/s", Better.HIGHER, b, rb, null,
                    "one ring slot and one journal document per record batch; baseline: one raw document per 64 KiB of "
                            + "length-prefixed events, gathered by the benchmark thread").withGoal(Goal.timesBaseline(1.0)));
        }
        tables.add(journal.build());

        Table.Builder net = Table.builder("NetworkProduceBenchmark: one client, sync produce of 100 B (acks=JOURNAL)",
                "plain-socket echo of 100 B on the same loopback");
        for (String target : new String[]{"sluice", "sluice-sync"}) {
            String client = target.equals("sluice") ? "" : "SyncProducer: ";
            for (double p : new double[]{0.5, 0.9, 0.99, 0.999}) {
                Row row = new Row(client + "P" + (p * 100 == Math.rint(p * 100) ? String.valueOf((int) (p * 100)) : String.valueOf(p * 100))
                        + " round trip (JMH sample time)", "µs", Better.LOWER, percentile(results, target, p),
                        percentile(results, "raw-echo", p), null,
                        p != 0.5 ? null : target.equals("sluice") ? "RemoteProducer (linger 0); against the reference: stream-processor table 3 (produce RTT)"
                                : "SyncProducer: the caller writes its request and reads the answer itself");
                net.row(p == 0.5 ? row.withGoal(Goal.timesBaseline(1.5)) : row);
            }
        }
        tables.add(net.build());
        return new ScenarioResult(name(), title(), reference(), tables, charts, notes, 0);
    }

    private static RunResult find(Collection<RunResult> results, String benchmark, String... params) {
        for (RunResult r : results) {
            if (!r.getParams().getBenchmark().endsWith(benchmark)) {
                continue;
            }
            boolean match = true;
            for (int i = 0; i + 1 < params.length; i += 2) {
                match &= params[i + 1].equals(r.getParams().getParam(params[i]));
            }
            if (match) {
                return r;
            }
        }
        return null;
    }

    private static Sample score(Collection<RunResult> results, String benchmark, String... params) {
        RunResult r = find(results, benchmark, params);
        if (r == null) {
            return null;
        }
        List<Double> scores = new ArrayList<>();
        r.getBenchmarkResults().forEach(b -> b.getIterationResults().forEach(it -> scores.add(it.getPrimaryResult().getScore())));
        return scores.isEmpty() ? null : Sample.of(scores);
    }

    /** The largest fork's median score over the smallest's, minus 1, in %; null without two forks. */
    private static Sample forkSpread(Collection<RunResult> results, String target) {
        RunResult r = find(results, "BusPublishBenchmark.oneProducer", "target", target);
        if (r == null) {
            return null;
        }
        double min = Double.MAX_VALUE;
        double max = 0;
        int forks = 0;
        for (var fork : r.getBenchmarkResults()) {
            List<Double> scores = new ArrayList<>();
            fork.getIterationResults().forEach(it -> scores.add(it.getPrimaryResult().getScore()));
            if (!scores.isEmpty()) {
                double median = Sample.of(scores).median();
                min = Math.min(min, median);
                max = Math.max(max, median);
                forks++;
            }
        }
        return forks < 2 || min <= 0 ? null : Sample.of(100 * (max / min - 1));
    }

    private static Sample secondary(Collection<RunResult> results, String benchmark, String target, String key) {
        RunResult r = find(results, benchmark, "target", target);
        if (r == null) {
            return null;
        }
        List<Double> values = new ArrayList<>();
        r.getBenchmarkResults().forEach(b -> {
            for (IterationResult it : b.getIterationResults()) {
                Result<?> s = it.getSecondaryResults().get(key);
                if (s != null) {
                    values.add(s.getScore());
                }
            }
        });
        return values.isEmpty() ? null : Sample.of(values);
    }

    /** Percentile of each measured iteration's sample-time distribution (µs). */
    private static Sample percentile(Collection<RunResult> results, String target, double p) {
        RunResult r = find(results, "NetworkProduceBenchmark.roundTrip", "target", target);
        if (r == null) {
            return null;
        }
        List<Double> values = new ArrayList<>();
        r.getBenchmarkResults().forEach(b -> b.getIterationResults().forEach(
                it -> values.add(it.getPrimaryResult().getStatistics().getPercentile(p * 100))));
        return values.isEmpty() ? null : Sample.of(values);
    }

    private static Double median(Sample s) {
        return s == null ? null : s.median();
    }
}
