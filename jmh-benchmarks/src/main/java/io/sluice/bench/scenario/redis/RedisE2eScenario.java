package io.sluice.bench.scenario.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.sluice.bench.BenchOptions;
import io.sluice.bench.Scenario;
import io.sluice.bench.internal.Pacer;
import io.sluice.bench.internal.TempDir;
import io.sluice.bench.report.Better;
import io.sluice.bench.report.Sample;
import io.sluice.bench.report.ScenarioResult;
import io.sluice.bench.report.Table;
import io.sluice.bench.report.chart.BarChart;
import io.sluice.bench.report.chart.Chart;
import io.sluice.bench.report.chart.PercentilePlot;
import io.sluice.testkit.RedisServer;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import org.HdrHistogram.Histogram;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * Reproduces {@code 000_c8c0bac8a289a47e.txt}: publish→receive over a Redis stream, two consumers in one group,
 * 1 KiB alphanumeric payloads in the reference's JSON envelope, MAXLEN ~ 10000, for 1,000 to 100,000 messages at the
 * reference's own throughput for each count (its "load"), then once unthrottled for the maximum rate. A private
 * redis-server is started on a free loopback port and stopped afterwards.
 */
public final class RedisE2eScenario implements Scenario {
    private static final int[] COUNTS = {1_000, 5_000, 10_000, 20_000, 100_000};
    /** Reference rows: avg, min, max, P95, P99 (ms), throughput (msg/s), loss %, CPU %, memory MB, peak MB. */
    private static final double[][] REF = {
            {0.35, 0.21, 4.58, 0.52, 0.76, 3_437, 0, 26.78, 16.32, 24.57},
            {0.32, 0.20, 6.00, 0.41, 0.61, 5_026, 0, 28.59, 20.60, 28.95},
            {0.32, 0.19, 5.15, 0.42, 0.60, 5_273, 0, 27.70, 64.34, 90.49},
            {0.31, 0.18, 5.38, 0.39, 0.54, 5_628, 0, 28.41, 120.89, 162.44},
            {0.31, 0.17, 9.15, 0.38, 0.51, 5_708, 0, 29.50, 305.92, 376.21}};
    private static final int CONSUMERS = 2;
    private static final String BASELINE = "raw Lettuce XADD from the publisher thread (same consumers)";

    @Override
    public String name() {
        return "redis-e2e";
    }

    @Override
    public String title() {
        return "publish→receive over a Redis stream, 2 consumers in a group";
    }

    @Override
    public String reference() {
        return "000_c8c0bac8a289a47e.txt";
    }

    @Override
    public ScenarioResult run(BenchOptions o) throws Exception {
        List<String> notes = new ArrayList<>();
        List<Table> tables = new ArrayList<>();
        List<Chart> charts = new ArrayList<>();
        int[] counts = counts(o);
        int iterations = Math.min(o.iterations(), 3);
        notes.add("Sluice: the application publishes each envelope to a journaled Sluice topic (acks=JOURNAL); a live "
                + "subscriber after the journal pipelines `XADD stream MAXLEN ~ 10000 * data <envelope>` with Lettuce, "
                + "flushing at the end of each Disruptor batch, and pausing (back-pressure) whenever the group's `lag` "
                + "(XINFO GROUPS) passes 7,000 so MAXLEN never trims an unread entry (the Redis writer lives in the bench "
                + "module until ingest-pipeline's Redis sink is merged). Baseline: " + BASELINE + ", flushed per message "
                + "when paced, with no lag guard.");
        notes.add("Receivers (identical for both): " + CONSUMERS + " consumers in one group, each `XREADGROUP COUNT 500 BLOCK 50` "
                + "on its own connection, then `XACK`. Latency = receive time − intended send time (coordinated-omission "
                + "corrected); the paced runs send at the reference's own throughput for that message count.");
        notes.add(iterations + " measured iterations per count after 1 warm-up of 2,000 messages (the reference: 3 + 1). CPU is "
                + "this JVM's CPU time in % of one core (publisher, Sluice, both consumers; Redis excluded); heap is the "
                + "whole benchmark JVM's (peak sampled every 10 ms, and after a full GC).");
        if (!RedisServer.isInstalled()) {
            notes.add("Not available: no redis-server on this machine (scripts/test.sh installs it).");
            return new ScenarioResult(name(), title(), reference(), tables, charts, notes, 0);
        }
        Map<Integer, List<E2eRun>> sluice = new LinkedHashMap<>();
        Map<Integer, List<E2eRun>> raw = new LinkedHashMap<>();
        List<E2eRun> sluiceMax = null;
        List<E2eRun> rawMax;
        int maxCount = o.size(100_000, 5_000);
        String unavailable = null;
        Envelope envelope = new Envelope(1024, 42);
        try (RedisServer server = RedisServer.startPrivate(o.workDir(), false);
             TempDir dir = new TempDir(o.workDir(), "sluice-bench-e2e")) {
            notes.add("redis-server " + redisVersion(server) + " at " + server.url() + ", no persistence.");
            RedisClient client = RedisClient.create(server.url());
            Broker broker = null;
            try {
                try {
                    broker = Broker.open(BrokerConfig.builder(dir.resolve("broker")).waitStrategy(o.waitStrategy()).build());
                } catch (UnsupportedOperationException e) {
                    unavailable = "broker-core is not implemented in this build (" + e.getMessage() + ")";
                }
                Runner runner = new Runner(client, envelope);
                if (broker != null) {
                    try (SluicePublisher p = new SluicePublisher(broker, client, "e2e")) {
                        runner.run(p, "sluice-warmup", 2_000, 5_000.0);
                        for (int c = 0; c < counts.length; c++) {
                            sluice.put(counts[c], runner.repeat(p, "sluice", counts[c], rate(counts[c]), iterations));
                        }
                        sluiceMax = runner.repeat(p, "sluice-max", maxCount, null, iterations);
                    }
                }
                try (RawLettucePublisher p = new RawLettucePublisher(client, true)) {
                    runner.run(p, "raw-warmup", 2_000, 5_000.0);
                    for (int count : counts) {
                        raw.put(count, runner.repeat(p, "raw", count, rate(count), iterations));
                    }
                }
                try (RawLettucePublisher p = new RawLettucePublisher(client, false)) {
                    rawMax = runner.repeat(p, "raw-max", maxCount, null, iterations);
                }
            } finally {
                if (broker != null) {
                    broker.close();
                }
                client.shutdown();
            }
        }
        if (unavailable != null) {
            notes.add("Sluice rows not available: " + unavailable);
        }
        PercentilePlot plot = new PercentilePlot("redis-e2e-latency.svg", "redis-e2e: publish→receive latency at the reference's load", "ms", 1e6);
        for (int count : counts) {
            int ri = indexOf(count);
            Table.Builder t = Table.builder(String.format("%,d messages at %,.0f msg/s (the reference's throughput for this count)", count, rate(count)), BASELINE);
            List<E2eRun> s = sluice.get(count);
            List<E2eRun> b = raw.get(count);
            double[] ref = ri >= 0 ? REF[ri] : null;
            t.row("Avg latency", "ms", Better.LOWER, sample(s, r -> r.millis(r.latency().getMean())), sample(b, r -> r.millis(r.latency().getMean())), ref(ref, 0), unavailable);
            t.row("Min latency", "ms", Better.LOWER, sample(s, r -> r.millis(r.latency().getMinValue())), sample(b, r -> r.millis(r.latency().getMinValue())), ref(ref, 1), null);
            t.row("Max latency", "ms", Better.LOWER, sample(s, r -> r.millis(r.latency().getMaxValue())), sample(b, r -> r.millis(r.latency().getMaxValue())), ref(ref, 2), null);
            t.row("P95 latency", "ms", Better.LOWER, sample(s, r -> r.millis(r.latency().getValueAtPercentile(95))), sample(b, r -> r.millis(r.latency().getValueAtPercentile(95))), ref(ref, 3), null);
            t.row("P99 latency", "ms", Better.LOWER, sample(s, r -> r.millis(r.latency().getValueAtPercentile(99))), sample(b, r -> r.millis(r.latency().getValueAtPercentile(99))), ref(ref, 4), "goal ≤ 0.5 ms");
            t.row("Throughput", "msg/s", Better.HIGHER, sample(s, E2eRun::perSecond), sample(b, E2eRun::perSecond), ref(ref, 5), "paced: equals the offered load when nothing lags");
            t.row("Message loss", "%", Better.LOWER, sample(s, E2eRun::lossPercent), sample(b, E2eRun::lossPercent), ref(ref, 6), null);
            t.row("Duplicates", "msgs", Better.LOWER, sample(s, r -> r.duplicates()), sample(b, r -> r.duplicates()), null, null);
            t.row("Process CPU", "% of a core", Better.LOWER, sample(s, E2eRun::cpuPercent), sample(b, E2eRun::cpuPercent), ref(ref, 7), null);
            t.row("Heap after run (after GC)", "MiB", Better.LOWER, sample(s, E2eRun::heapAfterMiB), sample(b, E2eRun::heapAfterMiB), ref(ref, 8), "reference: \"actual memory\"");
            t.row("Peak heap during run", "MiB", Better.LOWER, sample(s, E2eRun::heapPeakMiB), sample(b, E2eRun::heapPeakMiB), ref(ref, 9), "reference: \"peak memory\"");
            tables.add(t.build());
            if (count == counts[counts.length - 1]) {
                if (s != null) {
                    plot.histogram(String.format("Sluice, %,d msgs", count), merged(s));
                }
                plot.histogram(String.format("raw Lettuce, %,d msgs", count), merged(b));
                if (ref != null) {
                    Map<Double, Double> points = new LinkedHashMap<>();
                    points.put(95.0, ref[3]);
                    points.put(99.0, ref[4]);
                    plot.referencePoints(String.format("reference, %,d msgs", count), points);
                }
            }
        }
        Table.Builder m = Table.builder(String.format("Maximum rate: %,d messages published as fast as possible", maxCount), BASELINE + ", pipelined");
        m.row("Throughput (publish → last receive)", "msg/s", Better.HIGHER, sample(sluiceMax, E2eRun::perSecond), sample(rawMax, E2eRun::perSecond), 5_708.0, "goal ≥ 100,000; reference peak 5,708");
        m.row("Message loss", "%", Better.LOWER, sample(sluiceMax, E2eRun::lossPercent), sample(rawMax, E2eRun::lossPercent), 0.0, "MAXLEN ~ 10000 trims entries the group has not read yet if it lags by more");
        m.row("P99 latency", "ms", Better.LOWER, sample(sluiceMax, r -> r.millis(r.latency().getValueAtPercentile(99))), sample(rawMax, r -> r.millis(r.latency().getValueAtPercentile(99))), null, "from the start of the burst: queueing included");
        m.row("Peak heap during run", "MiB", Better.LOWER, sample(sluiceMax, E2eRun::heapPeakMiB), sample(rawMax, E2eRun::heapPeakMiB), 376.21, null);
        tables.add(m.build());
        charts.add(plot);
        BarChart bars = new BarChart("redis-e2e-throughput.svg", "redis-e2e: maximum rate with 2 consumers (1 KiB JSON)", "msg/s",
                List.of("Sluice", "raw Lettuce", "reference (peak)"));
        bars.category(String.format("%,d messages", maxCount), median(sluiceMax, E2eRun::perSecond), median(rawMax, E2eRun::perSecond), 5_708.0);
        charts.add(bars);
        return new ScenarioResult(name(), title(), reference(), tables, charts, notes, 0);
    }

    private static int[] counts(BenchOptions o) {
        String list = o.extra().get("messages");
        if (list != null) {
            return Arrays.stream(list.split(",")).map(String::trim).mapToInt(Integer::parseInt).toArray();
        }
        return o.quick() ? new int[]{1_000} : COUNTS;
    }

    private static int indexOf(int count) {
        for (int i = 0; i < COUNTS.length; i++) {
            if (COUNTS[i] == count) {
                return i;
            }
        }
        return -1;
    }

    /** The reference's throughput for that message count (its offered load); 5,000/s for counts it did not run. */
    private static double rate(int count) {
        int i = indexOf(count);
        return i >= 0 ? REF[i][5] : 5_000.0;
    }

    private static Double ref(double[] ref, int i) {
        return ref == null ? null : ref[i];
    }

    private static Sample sample(List<E2eRun> runs, ToDoubleFunction<E2eRun> f) {
        return runs == null ? null : Sample.of(runs.stream().map(r -> f.applyAsDouble(r)).toList());
    }

    private static Double median(List<E2eRun> runs, ToDoubleFunction<E2eRun> f) {
        Sample s = sample(runs, f);
        return s == null ? null : s.median();
    }

    private static Histogram merged(List<E2eRun> runs) {
        Histogram all = io.sluice.bench.internal.Latency.newHistogram();
        runs.forEach(r -> all.add(r.latency()));
        return all;
    }

    private static String redisVersion(RedisServer server) {
        RedisClient c = RedisClient.create(server.url());
        try (StatefulRedisConnection<byte[], byte[]> conn = c.connect(ByteArrayCodec.INSTANCE)) {
            String info = conn.sync().info("server");
            for (String line : info.split("\r?\n")) {
                if (line.startsWith("redis_version:")) {
                    return line.substring("redis_version:".length()).trim();
                }
            }
            return "unknown version";
        } finally {
            c.shutdown();
        }
    }

    /** Runs one publish→receive pass and measures it. */
    private static final class Runner {
        private static final java.time.Duration QUIET = java.time.Duration.ofSeconds(5);
        private final RedisClient client;
        private final Envelope envelope;
        private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        private final com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        private int runId;

        Runner(RedisClient client, Envelope envelope) {
            this.client = client;
            this.envelope = envelope;
        }

        List<E2eRun> repeat(Publisher p, String label, int count, Double rate, int iterations) throws Exception {
            List<E2eRun> runs = new ArrayList<>();
            for (int i = 0; i < iterations; i++) {
                runs.add(run(p, label + "-" + i, count, rate));
            }
            return runs;
        }

        E2eRun run(Publisher publisher, String label, int count, Double rate) throws Exception {
            String iteration = label + "-" + (runId++);
            byte[] stream = ("bench:e2e:" + iteration).getBytes(StandardCharsets.UTF_8);
            long[] intended = new long[count];
            System.gc();
            HeapSampler heap = new HeapSampler(memory);
            try (StreamReaders readers = new StreamReaders(client, stream, CONSUMERS, intended, count)) {
                publisher.target(stream);
                long cpu0 = os.getProcessCpuTime();
                long wall0 = System.nanoTime();
                Pacer pacer = rate == null ? null : new Pacer(System.nanoTime() + 1_000_000, rate);
                long first = 0;
                for (int i = 0; i < count; i++) {
                    intended[i] = pacer == null ? System.nanoTime() : pacer.awaitSlot(i);
                    if (i == 0) {
                        first = intended[0];
                    }
                    publisher.publish(envelope.build(iteration, i));
                }
                publisher.flush();
                awaitQuiet(readers, count);
                long cpu1 = os.getProcessCpuTime();
                long wall1 = System.nanoTime();
                Histogram h = readers.stopAndMerge();
                if (readers.failure() != null) {
                    throw new IllegalStateException("a consumer failed", readers.failure());
                }
                double peak = heap.stop();
                System.gc();
                double after = memory.getHeapMemoryUsage().getUsed() / (1024.0 * 1024.0);
                long last = readers.lastReceiveNanos();
                return new E2eRun(count, readers.received(), readers.duplicates(), h, Math.max(1, last - first),
                        100.0 * (cpu1 - cpu0) / Math.max(1, wall1 - wall0), peak, after);
            } finally {
                heap.stop();
                try (StatefulRedisConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE)) {
                    c.sync().del(stream);
                }
            }
        }

        /** Until every message arrived, or nothing arrived for {@link #QUIET} (the rest is lost). */
        private static void awaitQuiet(StreamReaders readers, int count) {
            long lastSeen = -1;
            long lastChange = System.nanoTime();
            while (readers.received() < count && readers.failure() == null) {
                long now = readers.received();
                if (now != lastSeen) {
                    lastSeen = now;
                    lastChange = System.nanoTime();
                } else if (System.nanoTime() - lastChange > QUIET.toNanos()) {
                    return;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            }
        }
    }

    /** Samples heap use every 10 ms on a daemon thread; {@link #stop()} returns the peak in MiB. */
    private static final class HeapSampler {
        private final Thread thread;
        private volatile boolean stopped;
        private volatile long peak;

        HeapSampler(MemoryMXBean memory) {
            thread = new Thread(() -> {
                while (!stopped) {
                    peak = Math.max(peak, memory.getHeapMemoryUsage().getUsed());
                    java.util.concurrent.locks.LockSupport.parkNanos(10_000_000);
                }
            }, "heap-sampler");
            thread.setDaemon(true);
            thread.start();
        }

        double stop() throws InterruptedException {
            stopped = true;
            thread.join(1_000);
            return peak / (1024.0 * 1024.0);
        }
    }
}
