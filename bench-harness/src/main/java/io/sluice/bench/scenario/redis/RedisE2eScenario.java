package io.sluice.bench.scenario.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.sluice.bench.BenchOptions;
import io.sluice.bench.Scenario;
import io.sluice.bench.internal.Pacer;
import io.sluice.bench.report.Better;
import io.sluice.bench.report.Goal;
import io.sluice.bench.report.Row;
import io.sluice.bench.report.Sample;
import io.sluice.bench.report.ScenarioResult;
import io.sluice.bench.report.Table;
import io.sluice.bench.report.chart.BarChart;
import io.sluice.bench.report.chart.Chart;
import io.sluice.bench.report.chart.PercentilePlot;
import io.sluice.testkit.RedisServer;
import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.sluice.redis.RedisStreamsConfig;
import org.HdrHistogram.Histogram;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.ToDoubleFunction;

/**
 * Reproduces {@code 000_c8c0bac8a289a47e.txt}: publish→receive over a Redis stream, two consumers in one group,
 * 1 KiB alphanumeric payloads in the reference's JSON envelope, MAXLEN ~ 10000, for 1,000 to 100,000 messages at the
 * reference's own throughput for each count (its "load"), then at 10× its best rate. Sluice's side is the product's
 * Redis Streams transport ({@code RedisStreamsProducer} / {@code RedisStreamsConsumer}); the baseline is raw Lettuce.
 * A private redis-server is started on a free loopback port and stopped afterwards.
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
    private static final String BASELINE = "raw Lettuce (XADD from the publisher thread, XREADGROUP readers)";
    /** 10× the reference's best rate (5,708 msg/s). */
    private static final double TEN_X_RATE = 57_080;

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
        int iterations = Math.min(o.iterations(), MAX_ITERATIONS);
        int tenXCount = o.size(100_000, 5_000);
        notes.add("Sluice: the product's Redis Streams transport (module redis-transport). The application sends each envelope "
                + "with `RedisStreamsProducer.send(record, callback)` (the `Producer` interface; linger 0: pipelined `XADD` on one "
                + "connection, each flushed at once; at most 4,096 in flight) to topic stream `bench:{<run>}:0`; trimming "
                + "`trimMaxLength = 10,000` runs behind the consumer group (never removes an entry the group has not acknowledged). "
                + CONSUMERS + " `RedisStreamsConsumer`s in one group, each on its own thread: `poll(50 ms)` (XREADGROUP COUNT 500 BLOCK 50) "
                + "then `commitAsync()` (`asyncCommitLingerMillis = 10`: the acknowledgements of up to 10 ms go out as one XACK in front of a read).");
        notes.add("Baseline: " + BASELINE + ": the publisher thread calls Lettuce `XADD key MAXLEN ~ 10000 * data <envelope>` on one "
                + "auto-flushing connection (same 4,096 in-flight bound, same Netty flush consolidation, no latency histograms), and " + CONSUMERS + " raw Lettuce readers do `XREADGROUP "
                + "COUNT 500 BLOCK 50` with the acknowledgements of up to 10 ms sent as one XACK in front of a read — the same commands, no Sluice code. Its "
                + "inline MAXLEN trims whether or not the group read the entries.");
        notes.add("Latency = receive time − the envelope's actual send time (the reference's receiveTime − publishTime). The "
                + "load generator paces with `LockSupport.parkNanos` (no spinning) at the reference's own throughput for each "
                + "count; \"send lateness\" is how far behind its schedule it ran (a stalled send shows there). " + iterations
                + " measured iterations per count (the reference: 3 + 1 warm-up).");
        notes.add("Each side's producer and two consumers share one set of Lettuce resources (2 I/O threads; "
                + "`RedisStreamsConfig.clientResources` for Sluice), built alike: no command-latency histograms, Netty's "
                + "flush consolidation in front of each socket. Warm-up: 2 × 5,000 messages per side; then the measured runs "
                + "alternate Sluice, raw, Sluice, raw … so both see the same machine.");
        notes.add("CPU = this JVM's CPU time over the run minus the heap sampler's, in % of one core: the publisher thread "
                + "(it builds each envelope and runs the producer's send / XADD, as the reference's process did), Lettuce's I/O "
                + "threads, the consumers (Redis excluded). Heap = the whole benchmark JVM's "
                + "(peak sampled every 10 ms, garbage included; and after a full GC).");
        if (!RedisServer.isInstalled()) {
            notes.add("Not available: no redis-server on this machine (scripts/test.sh installs it).");
            return new ScenarioResult(name(), title(), reference(), tables, charts, notes, 0);
        }
        Map<Integer, List<E2eRun>> sluice = new LinkedHashMap<>();
        Map<Integer, List<E2eRun>> raw = new LinkedHashMap<>();
        List<E2eRun> sluiceTenX;
        List<E2eRun> rawTenX;
        Envelope envelope = new Envelope(1024, 42);
        try (RedisServer server = RedisServer.startPrivate(o.workDir(), false)) {
            // the reference ran `docker run redis:latest`: RDB snapshots at Redis's default save points, no AOF
            configSet(server, "save", REDIS_LATEST_SAVE);
            notes.add("redis-server " + redisVersion(server) + " at " + server.url() + ", persistence as the reference's "
                    + "`redis:latest` container: RDB snapshots at the default save points (`save " + REDIS_LATEST_SAVE
                    + "`, set with CONFIG SET), no AOF.");
            // both sides: Lettuce resources without latency histograms, Netty's flush consolidation in front of each socket,
            // 2 I/O threads shared by the side's 3 connections (each side has its own)
            ClientResources rawResources = benchResources();
            ClientResources sluiceResources = benchResources();
            RedisClient client = RedisClient.create(rawResources, server.url());
            try {
                RedisStreamsConfig config = RedisStreamsConfig.builder(server.url()).keyPrefix("bench:").trimMaxLength(10_000)
                        .asyncCommitLingerMillis(TransportReceivers.ACK_LINGER_MILLIS).clientResources(sluiceResources).build();
                Runner runner = new Runner(client, envelope);
                try (TransportPublisher tp = new TransportPublisher(config);
                     RawLettucePublisher rp = new RawLettucePublisher(client, "raw:")) {
                    Side s = new Side("sluice", tp, (topic, tally) -> new TransportReceivers(config, topic, CONSUMERS, tally));
                    Side r = new Side("raw", rp, (topic, tally) -> new RawLettuceReaders(client,
                            RawLettucePublisher.streamKey("raw:", topic), CONSUMERS, tally));
                    // warm both up, then alternate Sluice and raw run by run so that both see the same machine
                    for (int w = 0; w < 2; w++) {
                        runner.run(s, 5_000, 5_000.0);
                        runner.run(r, 5_000, 5_000.0);
                    }
                    for (int count : counts) {
                        runner.alternate(s, r, count, rate(count), iterations, sluice, raw);
                    }
                    Map<Integer, List<E2eRun>> s10 = new LinkedHashMap<>();
                    Map<Integer, List<E2eRun>> r10 = new LinkedHashMap<>();
                    runner.alternate(s, r, tenXCount, TEN_X_RATE, iterations, s10, r10);
                    sluiceTenX = s10.get(tenXCount);
                    rawTenX = r10.get(tenXCount);
                    notes.add(String.format("Sluice's trimmer: %,d passes, %,d entries trimmed, %,d passes held back by a group "
                            + "that had not acknowledged older entries.", tp.producer().trimRuns(), tp.producer().trimmedEntries(),
                            tp.producer().trimsHeldByGroups()));
                }
            } finally {
                client.shutdown();
                rawResources.shutdown();
                sluiceResources.shutdown();
            }
        }
        PercentilePlot plot = new PercentilePlot("redis-e2e-latency.svg", "redis-e2e: publish→receive latency at the reference's load", "ms", 1e6);
        for (int count : counts) {
            int ri = indexOf(count);
            double[] ref = ri >= 0 ? REF[ri] : null;
            List<E2eRun> s = sluice.get(count);
            List<E2eRun> b = raw.get(count);
            tables.add(table(String.format("%,d messages at %,.0f msg/s (the reference's throughput for this count)", count, rate(count)),
                    s, b, ref, 0.3, true, count == 100_000));
            if (count == counts[counts.length - 1]) {
                plot.histogram(String.format("Sluice, %,d msgs", count), merged(s));
                plot.histogram(String.format("raw Lettuce, %,d msgs", count), merged(b));
                if (ref != null) {
                    Map<Double, Double> points = new LinkedHashMap<>();
                    points.put(95.0, ref[3]);
                    points.put(99.0, ref[4]);
                    plot.referencePoints(String.format("reference, %,d msgs", count), points);
                }
            }
        }
        tables.add(table(String.format("10× the reference's best rate: %,d messages at %,.0f msg/s", tenXCount, TEN_X_RATE),
                sluiceTenX, rawTenX, null, 1.0, false, false));
        plot.histogram(String.format("Sluice, %,.0f msg/s", TEN_X_RATE), merged(sluiceTenX));
        plot.histogram(String.format("raw Lettuce, %,.0f msg/s", TEN_X_RATE), merged(rawTenX));
        charts.add(plot);
        BarChart bars = new BarChart("redis-e2e-throughput.svg", "redis-e2e: P99 latency (ms) per offered load, 2 consumers (1 KiB JSON)", "ms",
                List.of("Sluice", "raw Lettuce", "reference"));
        for (int count : counts) {
            int ri = indexOf(count);
            bars.category(String.format("%,d @ %,.0f/s", count, rate(count)), median(sluice.get(count), r -> r.millis(r.latency().getValueAtPercentile(99))),
                    median(raw.get(count), r -> r.millis(r.latency().getValueAtPercentile(99))), ri >= 0 ? REF[ri][4] : null);
        }
        bars.category(String.format("%,d @ %,.0f/s", tenXCount, TEN_X_RATE), median(sluiceTenX, r -> r.millis(r.latency().getValueAtPercentile(99))),
                median(rawTenX, r -> r.millis(r.latency().getValueAtPercentile(99))), null);
        charts.add(bars);
        return new ScenarioResult(name(), title(), reference(), tables, charts, notes, 0);
    }

    private static ClientResources benchResources() {
        return DefaultClientResources.builder().ioThreadPoolSize(2).computationThreadPoolSize(2)
                .commandLatencyRecorder(CommandLatencyRecorder.disabled())
                .nettyCustomizer(new NettyCustomizer() {
                    @Override
                    public void afterChannelInitialized(Channel channel) {
                        channel.pipeline().addFirst(new FlushConsolidationHandler(256, true));
                    }
                }).build();
    }

    /** Why the heap rows are not the reference's memory figures. */
    static final String HEAP_NOT_COMPARABLE = "the whole benchmark JVM's heap under -Xms1g (G1 fills its young generation "
            + "before collecting, so the peak is mostly garbage; the harness's histograms and tallies are in it), after a GC "
            + "only at the end; the reference's figures are a Node.js process's memory";

    private static Table table(String title, List<E2eRun> s, List<E2eRun> b, double[] ref, double p99GoalMillis, boolean cpuGoal, boolean heapGoal) {
        Table.Builder t = Table.builder(title, BASELINE);
        Row avg = new Row("Avg latency", "ms", Better.LOWER, sample(s, r -> r.millis(r.latency().getMean())), sample(b, r -> r.millis(r.latency().getMean())), ref(ref, 0), null);
        t.row(ref == null ? avg : avg.withGoal(Goal.timesReference(1)));
        t.row("Min latency", "ms", Better.LOWER, sample(s, r -> r.millis(r.latency().getMinValue())), sample(b, r -> r.millis(r.latency().getMinValue())), ref(ref, 1), null);
        t.row("Max latency", "ms", Better.LOWER, sample(s, r -> r.millis(r.latency().getMaxValue())), sample(b, r -> r.millis(r.latency().getMaxValue())), ref(ref, 2), null);
        t.row("P95 latency", "ms", Better.LOWER, sample(s, r -> r.millis(r.latency().getValueAtPercentile(95))), sample(b, r -> r.millis(r.latency().getValueAtPercentile(95))), ref(ref, 3), null);
        t.row(new Row("P99 latency", "ms", Better.LOWER, sample(s, r -> r.millis(r.latency().getValueAtPercentile(99))), sample(b, r -> r.millis(r.latency().getValueAtPercentile(99))), ref(ref, 4), null)
                .withGoal(Goal.absolute(p99GoalMillis)));
        t.row("Throughput", "msg/s", Better.HIGHER, sample(s, E2eRun::perSecond), sample(b, E2eRun::perSecond), ref(ref, 5), "paced: equals the offered load when nothing lags");
        t.row(new Row("Message loss", "%", Better.LOWER, sample(s, E2eRun::lossPercent), sample(b, E2eRun::lossPercent), ref(ref, 6), null)
                .withGoal(Goal.absolute(0)));
        t.row(new Row("Duplicates", "msgs", Better.LOWER, sample(s, r -> r.duplicates()), sample(b, r -> r.duplicates()), null, null)
                .withGoal(Goal.absolute(0)));
        Row cpu = new Row("Process CPU (publisher thread included)", "% of a core", Better.LOWER, sample(s, E2eRun::cpuPercent), sample(b, E2eRun::cpuPercent), ref(ref, 7), null);
        t.row(cpuGoal ? cpu.withGoal(Goal.absolute(30)) : cpu);
        t.row(new Row("Heap after run (after GC)", "MiB", Better.LOWER, sample(s, E2eRun::heapAfterMiB), sample(b, E2eRun::heapAfterMiB), ref(ref, 8), "reference: \"actual memory\"")
                .notComparable(HEAP_NOT_COMPARABLE));
        t.row(new Row("Peak heap during run", "MiB", Better.LOWER, sample(s, E2eRun::heapPeakMiB), sample(b, E2eRun::heapPeakMiB), ref(ref, 9),
                heapGoal ? "reference: \"peak memory\"; its goal (≤ 376 MiB) is not checked on a figure that is not the live set" : "reference: \"peak memory\"")
                .notComparable(HEAP_NOT_COMPARABLE));
        t.row("Send lateness P99 (load generator behind schedule)", "ms", Better.LOWER, sample(s, r -> r.millis(r.lateness().getValueAtPercentile(99))), sample(b, r -> r.millis(r.lateness().getValueAtPercentile(99))), null, "parkNanos wake-up slack; large = sends stalled");
        return t.build();
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

    /** Measured runs per message count at most (the header of the report says so). */
    public static final int MAX_ITERATIONS = 3;

    /** Redis 7's default RDB save points (what {@code redis:latest} runs with when no config file is given). */
    static final String REDIS_LATEST_SAVE = "3600 1 300 100 60 10000";

    private static void configSet(RedisServer server, String key, String value) {
        RedisClient c = RedisClient.create(server.url());
        try (StatefulRedisConnection<String, String> conn = c.connect()) {
            String ok = conn.sync().configSet(key, value);
            if (!"OK".equals(ok)) {
                throw new IllegalStateException("CONFIG SET " + key + " " + value + " answered " + ok);
            }
        } finally {
            c.shutdown();
        }
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

    /** One side of the comparison: a publisher (kept across runs) and how to start receivers for a run's topic. */
    private record Side(String label, Publisher publisher, BiFunction<String, Tally, Receivers> receivers) {
    }

    /** Runs one publish→receive pass and measures it. */
    private static final class Runner {
        private static final java.time.Duration QUIET = java.time.Duration.ofSeconds(5);
        private final RedisClient client;
        private final Envelope envelope;
        private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        private final ThreadMXBean threadCpu = ManagementFactory.getThreadMXBean();
        private final com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        private int runId;

        Runner(RedisClient client, Envelope envelope) {
            this.client = client;
            this.envelope = envelope;
        }

        /** {@code iterations} runs of each side, alternating (a, b, a, b, ...). */
        void alternate(Side a, Side b, int count, Double rate, int iterations, Map<Integer, List<E2eRun>> aRuns,
                       Map<Integer, List<E2eRun>> bRuns) throws Exception {
            List<E2eRun> as = new ArrayList<>();
            List<E2eRun> bs = new ArrayList<>();
            for (int i = 0; i < iterations; i++) {
                as.add(run(a, count, rate));
                bs.add(run(b, count, rate));
            }
            aRuns.put(count, as);
            bRuns.put(count, bs);
        }

        E2eRun run(Side side, int count, Double rate) throws Exception {
            String topic = side.label() + "-" + count + "-" + (runId++);
            Tally tally = new Tally(count);
            Histogram lateness = io.sluice.bench.internal.Latency.newHistogram();
            System.gc();
            HeapSampler heap = new HeapSampler(memory);
            Publisher publisher = side.publisher();
            try (Receivers receivers = side.receivers().apply(topic, tally)) {
                long cpu0 = os.getProcessCpuTime();
                long sampler0 = threadCpu.getThreadCpuTime(heap.thread.getId());
                long wall0 = System.nanoTime();
                Pacer pacer = new Pacer(System.nanoTime() + 1_000_000, rate);
                long first = 0;
                for (int i = 0; i < count; i++) {
                    long intended = pacer.parkUntilSlot(i);
                    byte[] body = envelope.build(topic, i);
                    long now = System.nanoTime();
                    if (i == 0) {
                        first = now;
                    }
                    io.sluice.bench.internal.Latency.record(lateness, Math.max(0, now - intended));
                    tally.sent(i, now);
                    publisher.publish(topic, body);
                }
                publisher.flush();
                awaitQuiet(tally, receivers, count);
                long cpu1 = os.getProcessCpuTime();
                long sampler1 = threadCpu.getThreadCpuTime(heap.thread.getId());
                long wall1 = System.nanoTime();
                receivers.stop();
                if (receivers.failure() != null) {
                    throw new IllegalStateException("a consumer failed", receivers.failure());
                }
                double peak = heap.stop();
                System.gc();
                double after = memory.getHeapMemoryUsage().getUsed() / (1024.0 * 1024.0);
                // the publisher thread stays in: it runs the producer (send / XADD) as the reference's process did
                long cpu = (cpu1 - cpu0) - Math.max(0, sampler1 - sampler0);
                return new E2eRun(count, tally.received(), tally.duplicates(), tally.merged(), lateness,
                        Math.max(1, tally.lastReceiveNanos() - first), 100.0 * cpu / Math.max(1, wall1 - wall0), peak, after);
            } finally {
                heap.stop();
                try (StatefulRedisConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE)) {
                    c.sync().del(("bench:{" + topic + "}:0").getBytes(StandardCharsets.UTF_8),
                            RawLettucePublisher.streamKey("raw:", topic).getBytes(StandardCharsets.UTF_8));
                }
            }
        }

        /** Until every message arrived, or nothing arrived for {@link #QUIET} (the rest is lost). */
        private static void awaitQuiet(Tally tally, Receivers receivers, int count) {
            long lastSeen = -1;
            long lastChange = System.nanoTime();
            while (tally.received() < count && receivers.failure() == null) {
                long now = tally.received();
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
        final Thread thread;
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
