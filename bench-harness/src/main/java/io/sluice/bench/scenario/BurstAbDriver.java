package io.sluice.bench.scenario;

import io.sluice.bench.internal.TempDir;
import io.sluice.bench.internal.TradeMessages;
import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.WaitStrategyType;
import org.HdrHistogram.Histogram;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A same-run A/B of the event-bus burst alone (the scenario's burst of 15,000 events, its latency probe and
 * its buses), for profiling and for comparing broker settings: one JVM opens one broker per configuration and
 * alternates bursts among every system, the raw single- and multi-producer Disruptor rings included, then prints for
 * each the medians over the measured bursts of the burst's P50 and P99, the CPU of the whole process per burst
 * (from the first send to the last delivery, as the scenario measures it) and the publishing loop's time per event.
 * <pre>
 * java $(cat bench-harness/target/jvm.options) -cp bench-harness/target/sluice-bench.jar \
 *     io.sluice.bench.scenario.BurstAbDriver PARTITIONS BURSTS WARMUP_BURSTS LABEL:SUBSCRIBER_THREADS:JOURNAL_THREADS[:m|j|mj] ...
 * e.g. ... BurstAbDriver 1 200 200 dedicated:4:2 shared:0:4
 * </pre>
 * {@code m}/{@code j} select the memory-only and/or the journaled topic (default both).
 * {@code -Dsluice.bench.wait=YIELDING} (or BUSY_SPIN, BLOCKING) sets the wait strategy of every broker and raw ring (default SLEEPING);
 * {@code -Dsluice.bench.pretouch=BYTES} sets every broker's {@code journal.pretouch.bytes} (0: no pretoucher). Not part of the report:
 * {@code bin/sluice-bench event-bus} is; docs/benchmarks.md (issue 22, item 16) gives the runs made with this.
 */
public final class BurstAbDriver {
    private static final int BURST = 15_000;
    private static final int RING_SIZE = EventBusScenario.RING_SIZE;

    private BurstAbDriver() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: BurstAbDriver PARTITIONS BURSTS WARMUP_BURSTS [LABEL:SUBSCRIBER_THREADS:JOURNAL_THREADS[:m|j|mj]]...");
            System.exit(2);
        }
        int partitions = Integer.parseInt(args[0]);
        int bursts = Integer.parseInt(args[1]);
        int warmups = Integer.parseInt(args[2]);
        WaitStrategyType wait = WaitStrategyType.valueOf(System.getProperty("sluice.bench.wait", "SLEEPING"));
        byte[][] payloads = TradeMessages.messages(BURST);
        LatencyProbe probe = new LatencyProbe(BURST, partitions);
        List<String> names = new ArrayList<>();
        List<BusUnderTest> buses = new ArrayList<>();
        List<Broker> brokers = new ArrayList<>();
        List<TempDir> dirs = new ArrayList<>();
        try {
            for (String config : Arrays.asList(args).subList(3, args.length)) {
                String[] f = config.split(":");
                TempDir dir = new TempDir(Path.of(System.getProperty("java.io.tmpdir")), "sluice-burst-ab");
                dirs.add(dir);
                Broker broker = Broker.open(BrokerConfig.builder(dir.resolve("broker")).ringSize(RING_SIZE)
                        .subscriberThreads(Integer.parseInt(f[1])).journalThreads(Integer.parseInt(f[2]))
                        .waitStrategy(wait)
                        .journalPretouchBytes(Long.getLong("sluice.bench.pretouch", BrokerConfig.DEFAULT_JOURNAL_PRETOUCH_BYTES))
                        .build());
                brokers.add(broker);
                String topics = f.length > 3 ? f[3] : "mj";
                if (topics.contains("m")) {
                    names.add(f[0] + " memory-only");
                    buses.add(new SluiceBus(broker, "m", partitions, false, payloads, probe, Acks.MEMORY));
                }
                if (topics.contains("j")) {
                    names.add(f[0] + " journaled");
                    buses.add(new SluiceBus(broker, "j", partitions, true, payloads, probe, Acks.JOURNAL));
                }
            }
            names.add("raw ring (single producer)");
            buses.add(new RawBus(partitions, RING_SIZE, wait, payloads, probe, false));
            names.add("raw ring (multi-producer)");
            buses.add(new RawBus(partitions, RING_SIZE, wait, payloads, probe, true));
            run(buses, names, probe, bursts, warmups);
        } finally {
            for (BusUnderTest bus : buses) {
                bus.close();
            }
            brokers.forEach(Broker::close);
            dirs.forEach(TempDir::close);
        }
    }

    private static void run(List<BusUnderTest> buses, List<String> names, LatencyProbe probe, int bursts, int warmups)
            throws Exception {
        int n = buses.size();
        double[][] p50 = new double[n][bursts];
        double[][] p99 = new double[n][bursts];
        double[][] cpuMillis = new double[n][bursts];
        double[][] publishNanos = new double[n][bursts];
        for (int r = -warmups; r < bursts; r++) {
            for (int i = 0; i < n; i++) {
                EventBusScenario.Measured m = EventBusScenario.burst(buses.get(i), probe, BURST);
                if (r >= 0) {
                    Histogram h = m.latency();
                    p50[i][r] = h.getValueAtPercentile(50) / 1e3;
                    p99[i][r] = h.getValueAtPercentile(99) / 1e3;
                    cpuMillis[i][r] = m.cpuSeconds() * 1e3;
                    publishNanos[i][r] = m.publishLoopNanos() / (double) BURST;
                }
            }
        }
        for (int i = 0; i < n; i++) {
            System.out.printf(Locale.ROOT, "%-32s P50 %,7.0f µs  P99 %,7.0f µs [q1 %,6.0f, q3 %,6.0f]  CPU %5.1f ms per burst  "
                            + "publish %4.0f ns per event%n", names.get(i), median(p50[i]), median(p99[i]),
                    quantile(p99[i], 0.25), quantile(p99[i], 0.75), median(cpuMillis[i]), median(publishNanos[i]));
        }
    }

    private static double quantile(double[] values, double q) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[(int) Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))];
    }

    private static double median(double[] values) {
        return quantile(values, 0.5);
    }
}
