package io.sluice.bench.scenario;

import io.sluice.bench.BenchOptions;
import io.sluice.bench.Scenario;
import io.sluice.bench.internal.CpuTime;
import io.sluice.bench.internal.Await;
import io.sluice.bench.internal.DisruptorWait;
import io.sluice.bench.internal.Pacer;
import io.sluice.bench.internal.TempDir;
import io.sluice.bench.internal.TradeMessages;
import io.sluice.bench.report.Better;
import io.sluice.bench.report.Goal;
import io.sluice.bench.report.Row;
import io.sluice.bench.report.ScenarioResult;
import io.sluice.bench.report.Table;
import io.sluice.bench.report.chart.Chart;
import io.sluice.bench.report.chart.PercentilePlot;
import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.WaitStrategyType;
import org.HdrHistogram.Histogram;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reproduces {@code 004_8942bbd7ee7cff24.txt}: a burst of 15,000 events published at once and 50,000 events at a
 * steady 10,000/s, with 1 partition/1 consumer and 4 partitions/4 consumers, ~40-byte trading messages, latency
 * from publish to the consumer. Sluice runs twice: a memory-only topic (what the reference measured: a ring and its
 * consumer) and a journaled topic (every event is appended to Chronicle Queue before the subscriber sees it); the
 * baseline is raw Disruptor rings of the same size, no journal, waiting with the same wait strategy as Sluice's rings.
 */
public final class EventBusScenario implements Scenario {
    static final int RING_SIZE = 16_384;
    private static final int BURST = 15_000;
    private static final int SUSTAINED = 50_000;
    private static final double RATE = 10_000;
    /**
     * A burst lasts milliseconds: warm it up far more often than the 5-second sustained run. A journaled burst of
     * 15,000 events writes ~60 journal documents, and Chronicle's per-document code (`writingDocument`, the
     * document's close) reaches C2 only after 100–200 bursts (-XX:+PrintCompilation); with 5 warm-up bursts it still
     * ran interpreted in the measured ones, which made the journaled rows 3–6× the raw ring (docs/benchmarks.md).
     */
    private static final int BURST_WARMUP_FACTOR = 200;
    private static final int QUICK_BURST_WARMUP_FACTOR = 5;
    /**
     * Measured bursts per cell: this × the --iterations option. A burst lasts a few ms and its P99 on 2 shared cores is
     * bimodal, decided by where the scheduler puts the threads (docs/benchmarks.md, issue 22 item 17): a median of 5
     * bursts moved by a third from one report to the next, for Sluice and the raw ring alike.
     */
    private static final int BURST_RUN_FACTOR = 5;
    /**
     * As many journal threads as the 4P/4C baseline has consumer threads (a thread starts with its first stage), and
     * the subscribers on them ({@code subscriber.threads = 0}): a journaled partition's subscriber runs on its journal
     * writer's thread, right after it, as a raw ring's consumer runs on one thread; a memory-only partition's on the
     * least loaded journal thread.
     */
    private static final int STAGE_THREADS = 4;

    /** Reference figures in µs, in {@link LatencyRows#METRICS} order. */
    private static final double[] REF_BURST_1 = {1452, 2954, 3078, 4000, 4074, 4133, 4143, 4145};
    private static final double[] REF_BURST_4 = {331, 1552, 1557, 2491, 2606, 2700, 2726, 2730};
    private static final double[] REF_SUSTAINED_1 = {0, 22, 15, 57, 64, 69, 92, 1461};
    private static final double[] REF_SUSTAINED_4 = {0, 25, 22, 62, 64, 68, 83, 145};

    @Override
    public String name() {
        return "event-bus";
    }

    @Override
    public String title() {
        return "lock-free event bus: burst and sustained latency";
    }

    @Override
    public String reference() {
        return "004_8942bbd7ee7cff24.txt";
    }

    /**
     * Per-iteration histograms of one system for one (load, partitions, wait strategy) cell, and its CPU per run;
     * {@code extra} for the cell measured with another wait strategy than the run's (its rows carry no reference
     * figure: the reference's are compared once, in the run's own cells).
     */
    private record Cell(String load, int partitions, WaitStrategyType waitStrategy, boolean extra, Runs memory, Runs sluice, Runs raw) {
    }

    /**
     * The wait strategy of the extra sustained cell, when the run's own strategy parks: issue 22 states the sustained
     * P99 ≤ 50 µs and P99.9 ≤ 250 µs goals for a spinning or yielding wait, beside the raw ring waiting the same way,
     * wherever the raw ring reaches them. Yielding rather than spinning: on 2 cores, spinning consumers would take
     * the cores from the publisher.
     */
    static final WaitStrategyType LOW_LATENCY_WAIT = WaitStrategyType.YIELDING;

    /** The measured runs of one system in one cell: latency histograms and CPU s per M events, per run, same order. */
    private record Runs(List<Histogram> latency, List<Double> cpuPerMillion) {
    }

    private static List<Histogram> latency(Runs r) {
        return r == null ? null : r.latency();
    }

    private static io.sluice.bench.report.Sample cpu(Runs r) {
        return r == null ? null : io.sluice.bench.report.Sample.of(r.cpuPerMillion());
    }

    @Override
    public ScenarioResult run(BenchOptions o) throws Exception {
        int sustainedCount = o.size(SUSTAINED, 5_000);
        List<String> notes = new ArrayList<>();
        int burstWarmupFactor = o.quick() ? QUICK_BURST_WARMUP_FACTOR : BURST_WARMUP_FACTOR;
        int burstWarmups = o.warmups() * burstWarmupFactor;
        int burstRuns = o.iterations() * (o.quick() ? 1 : BURST_RUN_FACTOR);
        String warmup = "Every system is warmed up by " + burstWarmups + " bursts before the measured ones (all three alike): "
                + "a journaled burst writes ~60 journal documents, and Chronicle's per-document code reaches the JIT's "
                + "optimizing compiler only after 100–200 bursts; with 5 it ran interpreted in the measured runs.";
        notes.add("Sluice, two topics: memory-only (acks=MEMORY, the subscriber follows the producers on the ring — what the "
                + "reference measured) and journaled (Chronicle Queue append before delivery, acks=JOURNAL; its rows are "
                + "\"not comparable\" with the reference, which has no journal). Ring " + RING_SIZE + " slots per partition, "
                + "wait strategy " + DisruptorWait.describe(o.waitStrategy()) + ", one live subscriber (`Broker.subscribe`) "
                + "per topic; broker settings journal.threads=" + STAGE_THREADS + " and subscriber.threads=0: the subscribers "
                + "run on the journal threads (Agrona agents polling the rings), a journaled partition's right after its journal "
                + "writer on that writer's thread, a memory-only partition's on the least loaded one, so in 4P/4C each "
                + "partition has a thread, as the baseline runs one consumer thread per partition. " + warmup + " Baseline: raw Disruptor `RingBuffer` of " + RING_SIZE
                + " slots per partition waiting the same way (`DisruptorWait.of`: same spins, yields and park), "
                + "single-producer (one publishing thread, as here), its publish fenced before the wake-up check as exact "
                + "waking needs (a multi-producer ring's claim, Sluice's included, is that fence), "
                + "one `BatchEventProcessor` thread per partition, no journal.");
        notes.add("Latency = consumer's `System.nanoTime()` − the event's intended send time. Burst: all " + BURST
                + " events are sent in a tight loop; each event's intended time is just before its send. Sustained: "
                + sustainedCount + " events paced at " + (int) RATE + "/s; intended time = start + i × 100 µs, so a "
                + "stalled publisher is charged to every delayed event (coordinated-omission corrected).");
        notes.add(burstWarmups + " burst / " + o.warmups() + " sustained warm-up run(s) and " + burstRuns + " burst / "
                + o.iterations() + " sustained measured runs per cell (a burst lasts a few ms, and its P99 on 2 shared cores "
                + "depends on where the scheduler puts the threads: more bursts steady the median), the columns taking "
                + "turns run by run (memory-only, journaled, raw, memory-only, …; the three systems stay open together); every "
                + "run delivers exactly the events it sent, each id once (the run fails otherwise), so loss and duplicates are 0.");
        notes.add(CpuRows.WHAT + " Here the publisher is the benchmark's main thread (Sluice's `tryPublish` runs on it; "
                + "its pacing parks, then yields in the last 120 µs before a slot) and the consumers are the topics' subscribers (on the journal threads) and the raw rings' consumer threads, so both are in the rows. "
                + "The CPU is read just before the first send and just after the last delivery: the probe's reset, its exactly-once check "
                + "and the merge of its histograms (harness work, the same for every system) are outside it. A sustained "
                + "run lasts " + String.format(java.util.Locale.ROOT, "%.1f", sustainedCount / RATE) + " s, so its row is mostly what the waiting threads cost at 10,000/s.");
        notes.add("Goals (issue 22): memory-only P50, P99, P99.9 and CPU at most 1.5× the raw ring's, burst and sustained, "
                + "1P and 4P; the burst P99's spread over runs (largest / smallest) no wider than the raw ring's; "
                + "journaled burst P50, P99, P99.9 and CPU at most 2× the raw ring's and the burst P99 below the "
                + "reference's, journaled sustained P50, P99, P99.9 and CPU at most 1.2× the raw ring's; the burst P99 "
                + "≤ 1 ms (issue 12, stated for the journaled topic; the memory-only topic is held to it too). Issue 12's "
                + "sustained P99 ≤ 50 µs and P99.9 ≤ 250 µs are restated by issue 22 for a spinning or yielding wait, "
                + "where the raw ring waiting the same way reaches them: they are on the extra 1P/1C sustained table "
                + "waiting " + LOW_LATENCY_WAIT + " (run when the run's own strategy parks; 1P/1C only: on 2 cores, four "
                + "yielding consumer threads per system beside the other systems' idle ones would measure the scheduler), "
                + "not on the parking tables, "
                + "and are \"not applicable\" where the raw ring's own median misses them.");

        byte[][] payloads = TradeMessages.messages(Math.max(BURST, sustainedCount));
        List<Cell> cells = new ArrayList<>();
        String unavailable = null;
        try (TempDir dir = new TempDir(o.workDir(), "sluice-bench-bus")) {
            Broker broker = null;
            try {
                broker = Broker.open(BrokerConfig.builder(dir.resolve("broker")).ringSize(RING_SIZE)
                        .journalThreads(STAGE_THREADS).subscriberThreads(0).waitStrategy(o.waitStrategy()).build());
            } catch (UnsupportedOperationException e) {
                unavailable = "broker-core is not implemented in this build: " + e.getMessage();
            }
            try {
                for (int partitions : new int[]{1, 4}) {
                    cells.addAll(cells(o, broker, o.waitStrategy(), false, partitions, true, payloads, burstWarmupFactor,
                            burstRuns, sustainedCount, notes));
                }
            } finally {
                if (broker != null) {
                    broker.close();
                }
            }
            if (broker != null && (o.waitStrategy() == WaitStrategyType.SLEEPING || o.waitStrategy() == WaitStrategyType.BLOCKING)) {
                try (Broker lowLatency = Broker.open(BrokerConfig.builder(dir.resolve("broker-" + LOW_LATENCY_WAIT.name().toLowerCase(java.util.Locale.ROOT)))
                        .ringSize(RING_SIZE).journalThreads(STAGE_THREADS).subscriberThreads(0).waitStrategy(LOW_LATENCY_WAIT).build())) {
                    cells.addAll(cells(o, lowLatency, LOW_LATENCY_WAIT, true, 1, false, payloads, burstWarmupFactor, burstRuns,
                            sustainedCount, notes));
                }
            }
        }
        if (unavailable != null) {
            notes.add("Sluice rows not available: " + unavailable);
        }
        return result(cells, sustainedCount, notes, unavailable);
    }

    /**
     * The cells of one partition count: the three systems (memory-only topic, journaled topic, raw ring waiting as
     * {@code wait}) are open together and their runs alternate (memory-only, journaled, raw, …), so that a drift of the
     * machine during the cell lands on every column alike. A null broker (not in this build) runs the raw ring only.
     */
    private static List<Cell> cells(BenchOptions o, Broker broker, WaitStrategyType wait, boolean extra, int partitions,
                                    boolean withBurst, byte[][] payloads, int burstWarmupFactor, int burstRuns,
                                    int sustainedCount, List<String> notes) throws Exception {
        String suffix = extra ? "-" + wait.name().toLowerCase(java.util.Locale.ROOT) : "";
        LatencyProbe probe = new LatencyProbe(payloads.length, partitions);
        List<Cell> cells = new ArrayList<>();
        try (SluiceBus mem = broker == null ? null : new SluiceBus(broker, "mem-" + partitions + "p" + suffix, partitions, false, payloads, probe, Acks.MEMORY);
             SluiceBus journaled = broker == null ? null : new SluiceBus(broker, "bus-" + partitions + "p" + suffix, partitions, true, payloads, probe, Acks.JOURNAL);
             RawBus raw = new RawBus(partitions, RING_SIZE, wait, payloads, probe)) {
            List<BusUnderTest> buses = java.util.Arrays.asList(mem, journaled, raw);
            List<Runs> burst = withBurst ? alternating(o, burstWarmupFactor, burstRuns, BURST, buses, bus -> burst(bus, probe, BURST)) : null;
            List<Runs> sustained = alternating(o, 1, o.iterations(), sustainedCount, buses, bus -> sustained(bus, probe, sustainedCount));
            if (broker != null) {
                check(mem);
                check(journaled);
                if (!extra) {
                    notes.add(breakdown(broker, partitions));
                }
            }
            if (burst != null) {
                cells.add(new Cell("burst", partitions, wait, extra, burst.get(0), burst.get(1), burst.get(2)));
            }
            cells.add(new Cell("sustained", partitions, wait, extra, sustained.get(0), sustained.get(1), sustained.get(2)));
        }
        return cells;
    }

    /** The goals of issue 22 (and issue 12's burst P99) on one cell's latency rows, {@link LatencyRows#METRICS} index → goals. */
    private static Map<Integer, List<Goal>> goals(Cell c, boolean journaled) {
        boolean burst = c.load.equals("burst");
        double factor = !journaled ? 1.5 : burst ? 2.0 : 1.2;
        Map<Integer, List<Goal>> goals = new java.util.HashMap<>();
        for (int metric : new int[]{2, 5, 6}) {
            goals.put(metric, new ArrayList<>(List.of(Goal.timesBaseline(factor))));
        }
        if (burst) {
            // issue 12: ≤ 1 ms (stated for the journaled topic; a memory-only topic is held to it too); issue 22: the
            // journaled P99 below the reference's (4.1 ms 1P, 2.7 ms 4P)
            goals.get(5).add(Goal.absolute(1_000));
            if (journaled && !c.extra) {
                goals.get(5).add(Goal.timesReference(1.0));
            }
        }
        if (c.extra && !burst) {
            goals.get(5).add(Goal.absoluteWhereBaselineReaches(50));
            goals.get(6).add(Goal.absoluteWhereBaselineReaches(250));
        }
        return goals;
    }

    /** The CPU goal of issue 22: memory-only 1.5× the raw ring's; journaled 2× in a burst, 1.2× sustained. */
    private static Goal cpuGoal(Cell c, boolean journaled) {
        return Goal.timesBaseline(!journaled ? 1.5 : c.load.equals("burst") ? 2.0 : 1.2);
    }

    /**
     * The burst P99's spread over the measured runs, largest / smallest (issue 22: no wider than the raw ring's), one
     * figure per system.
     */
    private static Row p99Spread(Cell c) {
        return new Row("memory-only P99 spread over runs (largest / smallest)", "×", Better.LOWER, spread(c.memory), spread(c.raw),
                null, "one figure per system: its runs' largest burst P99 over their smallest")
                .withGoal(Goal.timesBaseline(1.0));
    }

    private static io.sluice.bench.report.Sample spread(Runs r) {
        if (r == null) {
            return null;
        }
        double min = Double.MAX_VALUE;
        double max = 0;
        for (Histogram h : r.latency()) {
            double p99 = h.getValueAtPercentile(99);
            min = Math.min(min, p99);
            max = Math.max(max, p99);
        }
        return io.sluice.bench.report.Sample.of(max / Math.max(min, 1));
    }

    private ScenarioResult result(List<Cell> cells, int sustainedCount, List<String> notes, String unavailable) {
        List<Table> tables = new ArrayList<>();
        String baseline = "raw Disruptor ring, " + RING_SIZE + " slots/partition, no journal";
        for (Cell c : cells) {
            boolean burst = c.load.equals("burst");
            String title = (burst ? "Burst load, " + String.format("%,d", BURST) + " events at once"
                    : "Sustained load, " + String.format("%,d", sustainedCount) + " events at 10,000/s")
                    + " — " + c.partitions + " partition" + (c.partitions == 1 ? "" : "s") + " / " + c.partitions + " consumer"
                    + (c.partitions == 1 ? "" : "s")
                    + (c.partitions == 1 ? "" : " (Sluice: one subscriber per topic, its " + c.partitions + " partitions on "
                    + STAGE_THREADS + " journal threads; raw ring and reference: " + c.partitions + " consumer threads)")
                    + (c.extra ? ", every side waiting " + DisruptorWait.describe(c.waitStrategy) : "");
            double[] ref = c.extra ? null : burst ? (c.partitions == 1 ? REF_BURST_1 : REF_BURST_4) : (c.partitions == 1 ? REF_SUSTAINED_1 : REF_SUSTAINED_4);
            Table.Builder t = Table.builder(title, c.extra ? baseline + ", waiting the same way" : baseline);
            String missing = c.sluice == null ? "Sluice: " + unavailable : null;
            LatencyRows.add(t, "memory-only ", latency(c.memory), latency(c.raw), ref, null, "µs", 1_000,
                    missing != null ? missing : c.extra ? "memory-only topic; no reference figures in this table (the "
                            + "reference's are compared once, in the tables above)" : "memory-only topic: the reference's setup",
                    goals(c, false));
            LatencyRows.add(t, "journaled ", latency(c.sluice), latency(c.raw), ref,
                    "the journaled topic appends to Chronicle Queue before delivery; the reference's bus has no journal", "µs", 1_000,
                    missing != null ? missing : "journaled topic: includes a Chronicle append the reference does not do",
                    goals(c, true));
            if (burst && c.memory != null) {
                t.row(p99Spread(c));
            }
            CpuRows.add(t, "memory-only ", cpu(c.memory), cpu(c.raw),
                    missing != null ? missing : "whole JVM during the run, publisher and subscriber threads included (see the notes)",
                    cpuGoal(c, false));
            CpuRows.add(t, "journaled ", cpu(c.sluice), cpu(c.raw), missing != null ? missing : "journal thread included",
                    cpuGoal(c, true));
            tables.add(t.build());
        }
        List<Chart> charts = new ArrayList<>();
        for (String load : new String[]{"burst", "sustained"}) {
            PercentilePlot plot = new PercentilePlot("event-bus-" + load + ".svg",
                    "event-bus: " + load + " latency distribution (" + (load.equals("burst") ? "15,000 at once" : "10,000/s") + ")", "µs", 1_000);
            for (Cell c : cells) {
                if (c.extra) {
                    continue;
                }
                if (c.load.equals(load) && c.sluice != null) {
                    plot.histogram("Sluice " + c.partitions + "P/" + c.partitions + "C (memory-only)", LatencyRows.merged(c.memory.latency()));
                    plot.histogram("Sluice " + c.partitions + "P/" + c.partitions + "C (journal)", LatencyRows.merged(c.sluice.latency()));
                }
            }
            for (Cell c : cells) {
                if (c.load.equals(load) && !c.extra) {
                    plot.histogram("raw Disruptor " + c.partitions + "P/" + c.partitions + "C", LatencyRows.merged(c.raw.latency()));
                }
            }
            for (int p : new int[]{1, 4}) {
                double[] ref = load.equals("burst") ? (p == 1 ? REF_BURST_1 : REF_BURST_4) : (p == 1 ? REF_SUSTAINED_1 : REF_SUSTAINED_4);
                Map<Double, Double> points = new LinkedHashMap<>();
                points.put(50.0, ref[2]);
                points.put(90.0, ref[3]);
                points.put(95.0, ref[4]);
                points.put(99.0, ref[5]);
                points.put(99.9, ref[6]);
                plot.referencePoints("reference " + p + "P/" + p + "C", points);
            }
            charts.add(plot);
        }
        return new ScenarioResult(name(), title(), reference(), tables, charts, notes, 0);
    }

    /**
     * Warm-ups (discarded; {@code warmupFactor} × the option, since a burst is too short to warm the JIT) then measured
     * iterations, each with the process CPU time from its first send to its last delivery ({@link Measured}), per million
     * of its {@code events}. The
     * systems take turns run by run (A, B, C, A, B, C, …); a null system (not in this build) gives null runs.
     */
    private static List<Runs> alternating(BenchOptions o, int warmupFactor, int iterations, int events, List<BusUnderTest> systems,
                                          OneRun run) throws Exception {
        for (int i = 0; i < o.warmups() * warmupFactor; i++) {
            for (BusUnderTest bus : systems) {
                if (bus != null) {
                    run.on(bus);
                }
            }
        }
        List<List<Histogram>> measured = new ArrayList<>();
        List<List<Double>> cpu = new ArrayList<>();
        for (int s = 0; s < systems.size(); s++) {
            measured.add(new ArrayList<>());
            cpu.add(new ArrayList<>());
        }
        for (int i = 0; i < iterations; i++) {
            for (int s = 0; s < systems.size(); s++) {
                if (systems.get(s) == null) {
                    continue;
                }
                Measured m = run.on(systems.get(s));
                measured.get(s).add(m.latency());
                cpu.get(s).add(CpuTime.perMillion(m.cpuSeconds(), events));
            }
        }
        List<Runs> runs = new ArrayList<>();
        for (int s = 0; s < systems.size(); s++) {
            runs.add(systems.get(s) == null ? null : new Runs(measured.get(s), cpu.get(s)));
        }
        return runs;
    }

    /** One run of a load against one system. */
    @FunctionalInterface
    private interface OneRun {
        Measured on(BusUnderTest bus) throws Exception;
    }

    /**
     * One measured run of a load: its latency histogram, the process's CPU from just before the first send to the last
     * delivery (the probe's reset, check and histogram merge, the harness's own work, are outside it), and how long the
     * sending loop took.
     */
    record Measured(Histogram latency, double cpuSeconds, long publishLoopNanos) {
    }

    /**
     * One burst: {@code count} events sent in a tight loop, each stamped with its intended time just before its send;
     * waits until the probe received each once ({@link BurstAbDriver} runs the same).
     */
    static Measured burst(BusUnderTest bus, LatencyProbe probe, int count) throws Exception {
        probe.reset();
        long[] intended = probe.intended;
        CpuTime.Mark cpu = CpuTime.mark();
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            intended[i] = System.nanoTime();
            while (!bus.tryPublish(i)) {
                Thread.onSpinWait();
            }
        }
        long publishLoopNanos = System.nanoTime() - start;
        Await.count("burst events received", probe::received, count, Duration.ofSeconds(60));
        double cpuSeconds = cpu.seconds();
        probe.verifyExactly(count);
        return new Measured(probe.merged(), cpuSeconds, publishLoopNanos);
    }

    private static Measured sustained(BusUnderTest bus, LatencyProbe probe, int count) throws Exception {
        probe.reset();
        long[] intended = probe.intended;
        CpuTime.Mark cpu = CpuTime.mark();
        long start = System.nanoTime();
        Pacer pacer = new Pacer(start + 1_000_000, RATE);
        for (int i = 0; i < count; i++) {
            intended[i] = pacer.awaitSlot(i);
            while (!bus.tryPublish(i)) {
                Thread.onSpinWait();
            }
        }
        long publishLoopNanos = System.nanoTime() - start;
        Await.count("sustained events received", probe::received, count, Duration.ofSeconds(60));
        double cpuSeconds = cpu.seconds();
        probe.verifyExactly(count);
        return new Measured(probe.merged(), cpuSeconds, publishLoopNanos);
    }

    /** Where Sluice's time went, from its own metrics (cumulative over warm-ups and runs of this configuration). */
    private static String breakdown(Broker broker, int partitions) {
        io.sluice.core.BrokerMetrics m = broker.metrics();
        Histogram pj = m.publishToJournal();
        Histogram js = m.journalToSubscriber();
        String s = String.format("Sluice's own metrics after the %dP/%dC runs (all runs so far, µs): publish→journal P50 %.1f, "
                        + "P99 %.1f, max %.1f; journal→subscriber P50 %.1f, P99 %.1f, max %.1f.", partitions, partitions,
                pj.getValueAtPercentile(50) / 1e3, pj.getValueAtPercentile(99) / 1e3, pj.getMaxValue() / 1e3,
                js.getValueAtPercentile(50) / 1e3, js.getValueAtPercentile(99) / 1e3, js.getMaxValue() / 1e3);
        return s;
    }

    private static void check(BusUnderTest bus) {
        if (bus.errors() != 0) {
            throw new IllegalStateException(bus.errors() + " sends failed");
        }
    }
}
