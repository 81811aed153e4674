package io.sluice.bench.scenario;

import io.sluice.bench.BenchOptions;
import io.sluice.bench.Scenario;
import io.sluice.bench.baseline.LoopbackEcho;
import io.sluice.bench.baseline.RawJournal;
import io.sluice.bench.internal.TempDir;
import io.sluice.bench.report.Better;
import io.sluice.bench.report.Goal;
import io.sluice.bench.report.Row;
import io.sluice.bench.report.ScenarioResult;
import io.sluice.bench.report.Table;
import io.sluice.bench.report.chart.BarChart;
import io.sluice.bench.report.chart.Chart;
import io.sluice.bench.report.chart.PercentilePlot;
import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reproduces the seven benchmarks of {@code 001_8bf29e2983b20e26.txt} (a C++ Kafka-like stream processor) on
 * Sluice's embedded broker, with raw baselines in the same run: Disruptor rings appending to plain Chronicle Queues,
 * plain Chronicle tailers, and a plain-socket loopback echo for the network rows.
 */
public final class StreamProcessorScenario implements Scenario {
    private static final int RING = 16_384;
    /** Direct produce records per run: the reference's 50,000 last ~20 ms here, too short to time; the rate is the same quantity. */
    private static final int DIRECT = 500_000;
    /** Records per direct-consume poll: the reference's batches held ~100 (196.83 µs average at 502,647 msg/s). */
    private static final int CONSUME_POLL = 100;
    /** Records per producer thread in table 2 (the reference's 10,000 last ~4 ms here at one thread). */
    private static final int CONCURRENT_PER_THREAD = 100_000;
    /** Records per consumer-group run (the reference's 20,000 last 30–50 ms there and ~2 ms here). */
    private static final int GROUP_RECORDS = 200_000;
    /** 1 KiB records per storage write run (the reference's 20,000 last ~40 ms here). */
    private static final int STORAGE_RECORDS = 100_000;
    /**
     * Turns of the three sequential reads (Sluice's two, plain Chronicle's) before the measured ones: Sluice's record
     * decoding reaches the JIT's optimizing compiler only after ~10 reads of the partition (with one warm-up its rows
     * measured the interpreter: 0.5-2.8 M msg/s against ~5 M warm), plain Chronicle's loop after fewer. The random
     * reads take as many turns: the offset lookup ({@code PartitionJournal.documentIndexOf}) and the read loop were
     * compiled, trapped and recompiled by C2 over the first ~80,000 reads (P50 2.3-3.7 µs, then 1.4 µs against the
     * plain tailer's 1.2 µs).
     */
    private static final int READ_WARMUPS = 20;
    /**
     * Warm-up turns of each consumer-group size: a run reads 200,000 records in 15–150 ms, and with one warm-up the
     * 1-consumer runs went from 1.2 to 12.4 M msg/s as the consumer's poll path reached the JIT's optimizing compiler.
     */
    private static final int GROUP_WARMUPS = 10;
    private static final String RAW_PRODUCE = "raw Disruptor rings → plain Chronicle Queue appends";
    /** Records per network fetch: near the reference's ~100 records per fetch. */
    private static final int FETCH_RECORDS = 100;
    /** The fetch baseline's request size: about a one-partition fetch request of Sluice's protocol. */
    private static final int FETCH_REQUEST_BYTES = 48;
    private static final String NET_MISSING = "needs the embedded broker (not available in this build)";

    @Override
    public String name() {
        return "stream-processor";
    }

    @Override
    public String title() {
        return "stream processor: direct, concurrent, network, sizes, groups, storage";
    }

    @Override
    public String reference() {
        return "001_8bf29e2983b20e26.txt";
    }

    @Override
    public ScenarioResult run(BenchOptions o) throws Exception {
        List<Table> tables = new ArrayList<>();
        List<Chart> charts = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        String[] reason = {null};
        notes.add("Sluice: embedded broker, journaled topics, acks=JOURNAL (acknowledged once appended to the memory-mapped "
                + "journal: survives a process crash), ring " + RING + ", wait strategy " + o.waitStrategy()
                + ". Throughput runs end when the last acknowledgement arrives. The \"enqueue\" latency rows time the "
                + "`trySend` call: the hand-off to the partition ring, not the acknowledgement (which comes later, after "
                + "the journal append). The reference's produce call is not documented to be the same thing, so those "
                + "rows say \"not comparable\"; the network round-trip rows (table 3) time a produce to its acknowledgement.");
        notes.add("Baselines: `" + RAW_PRODUCE + "` (the same bytes, no framing, no acknowledgements), plain Chronicle "
                + "tailers reading into a reused buffer, plain blocking sockets on 127.0.0.1 exchanging length-prefixed frames, "
                + "buffered on both sides (one write per frame): the same 100 B echoed for produce, a small request answered "
                + "with the fetch's payload bytes for fetch.");
        notes.add("Data rates are MiB/s of payload, as in the reference (138,764 × 1 KiB = 135.5).");
        notes.add("Sequential reads (table 7): the three readers (Sluice's `readViews`, Sluice's `read`, the plain tailer) "
                + "take turns, " + READ_WARMUPS + " turns of whole-partition reads unmeasured first (JIT warm-up; "
                + "quick mode: the --warmups count), then the measured turns; the random reads (Sluice's `seek` + `readViews`, the tailer's `moveToIndex` + "
                + "a copy into one reused array) as many turns of 10,000 reads. Consumer groups (table 6): "
                + GROUP_WARMUPS + " warm-up turns per group size, for the same reason.");
        notes.add(CpuRows.WHAT + " Here the load generators (producer threads, consumers, network clients) run in the "
                + "benchmark JVM, so their CPU is in every CPU row, Sluice's and the baseline's alike; the network rows hold "
                + "client and server (Sluice's Netty broker, or the echo server) together.");
        try (TempDir dir = new TempDir(o.workDir(), "sluice-bench-sp")) {
            Broker broker = SluiceBroker.open(dir.resolve("broker"), o, RING, reason);
            try {
                direct(o, broker, dir, tables, charts);
                concurrent(o, broker, dir, tables, charts);
                network(o, broker, tables, charts, notes);
                sizes(o, broker, dir, tables, charts);
                groups(o, broker, dir, tables, charts);
                storage(o, broker, dir, tables, charts);
            } finally {
                if (broker != null) {
                    broker.close();
                }
            }
        }
        if (reason[0] != null) {
            notes.add("Sluice rows not available: " + reason[0]);
        }
        return new ScenarioResult(name(), title(), reference(), tables, charts, notes, 0);
    }

    private static Producer producer(Broker broker) {
        return broker.newProducer(ProducerConfig.builder().acks(Acks.JOURNAL)
                .partitioner(ProducerConfig.Partitioner.ROUND_ROBIN).build());
    }

    private static ProducerRecord record(String topic, int size) {
        byte[] value = new byte[size];
        Arrays.fill(value, (byte) 'x');
        return ProducerRecord.of(topic, value);
    }

    private static byte[] bytes(int size) {
        byte[] value = new byte[size];
        Arrays.fill(value, (byte) 'x');
        return value;
    }

    // Benchmark 1: direct produce / consume, 50,000 × 100 B, 4 partitions.
    private void direct(BenchOptions o, Broker broker, TempDir dir, List<Table> tables, List<Chart> charts) throws Exception {
        int n = o.size(DIRECT, 10_000);
        List<Run> sluiceProduce;
        List<Run> sluiceConsume;
        List<Run> rawProduce;
        List<Run> rawConsume;
        String topic = "direct";
        if (broker != null) {
            broker.createTopic(TopicConfig.of(topic, 4));
        }
        // Sluice and the raw journal in turns, run by run; each consume reads everything its produce runs wrote
        try (RawJournal journal = new RawJournal(dir.resolve("raw-direct"), 4);
             Producer p = broker == null ? null : producer(broker)) {
            byte[] v = bytes(100);
            ProducerRecord r = record(topic, 100);
            Repeat.Pair produced = Repeat.alternating(o, p == null ? null : () -> SluiceLoads.produce(p, r, 1, n),
                    () -> RawLoads.produce(journal, RING, o.waitStrategy(), v, 1, n));
            sluiceProduce = produced.a();
            rawProduce = produced.b();
            long total = (long) n * (o.warmups() + o.iterations());
            Repeat.Pair consumed = Repeat.alternating(o, broker == null ? null
                            : () -> SluiceLoads.consume(broker, broker.partitionsOf(topic), total, CONSUME_POLL),
                    () -> RawLoads.consume(journal, total, CONSUME_POLL));
            sluiceConsume = consumed.a();
            rawConsume = consumed.b();
        }
        Table.Builder t = Table.builder("1. Direct produce: " + String.format("%,d", n) + " × 100 B into 4 partitions", RAW_PRODUCE);
        t.row("Throughput", "msg/s", Better.HIGHER, Repeat.sample(sluiceProduce, Run::perSecond), Repeat.sample(rawProduce, Run::perSecond), 320_391.0, "until the last acknowledgement");
        t.row("Data rate", "MiB/s", Better.HIGHER, Repeat.sample(sluiceProduce, r -> r.mebibytesPerSecond(100)), Repeat.sample(rawProduce, r -> r.mebibytesPerSecond(100)), 34.53, null);
        latencyRows(t, sluiceProduce, rawProduce, new int[]{0, 1, 2, 4, 5, 7}, new double[]{2.61, 3.08, 2.66, 4.41, 7.46, 536.41},
                "enqueue (trySend call)", "Sluice's figure is the trySend call (enqueue; acknowledged later), the reference's a produce call");
        CpuRows.add(t, "", sluiceProduce, rawProduce, "per acknowledged record, producer thread included; see the notes");
        tables.add(t.build());
        // the consume rows read everything written by the produce runs (warm-ups included), from the beginning
        Table.Builder c = Table.builder("1. Direct consume: everything produced above, from the earliest offset",
                "plain Chronicle tailers, one thread, 4 queues");
        c.row("Throughput", "msg/s", Better.HIGHER, Repeat.sample(sluiceConsume, Run::perSecond), Repeat.sample(rawConsume, Run::perSecond), 502_647.0, "one consumer, 4 partitions, polls of ≤ " + CONSUME_POLL
                + " records (the reference's batch: ~100 records, its 196.83 µs average batch at 502,647 msg/s)");
        c.row("Data rate", "MiB/s", Better.HIGHER, Repeat.sample(sluiceConsume, r -> r.mebibytesPerSecond(100)), Repeat.sample(rawConsume, r -> r.mebibytesPerSecond(100)), 54.17, null);
        latencyRows(c, sluiceConsume, rawConsume, new int[]{0, 1, 2, 4, 5}, new double[]{183.84, 196.83, 194.17, 206.80, 260.75}, "batch (" + CONSUME_POLL + ")", null);
        CpuRows.add(c, "", sluiceConsume, rawConsume, "per record read, consumer thread included");
        tables.add(c.build());
        PercentilePlot plot = new PercentilePlot("stream-processor-produce-call.svg", "stream-processor: direct produce, enqueue latency (100 B)", "µs", 1_000);
        if (sluiceProduce != null) {
            plot.histogram("Sluice trySend call (enqueue; ack later)", merged(sluiceProduce));
        }
        plot.histogram("raw Disruptor publish", merged(rawProduce));
        plot.referencePoints("reference produce", new TreeMap<>(Map.of(50.0, 2.66, 95.0, 4.41, 99.0, 7.46)));
        charts.add(plot);
    }

    // Benchmark 2: concurrent producers, 10,000 messages per thread, 100 B.
    private void concurrent(BenchOptions o, Broker broker, TempDir dir, List<Table> tables, List<Chart> charts) throws Exception {
        int per = o.size(CONCURRENT_PER_THREAD, 5_000);
        int[] threads = {1, 2, 4, 8};
        double[] ref = {267_763, 436_914, 387_641, 376_082};
        Table.Builder t = Table.builder("2. Concurrent producers: " + String.format("%,d", per) + " × 100 B per thread, 4 partitions",
                RAW_PRODUCE + " (multi-producer rings)");
        BarChart bars = new BarChart("stream-processor-concurrent.svg", "stream-processor: concurrent producers (100 B)", "msg/s",
                List.of("Sluice", "raw baseline", "reference"));
        String topic = "concurrent";
        if (broker != null) {
            broker.createTopic(TopicConfig.of(topic, 4));
        }
        try (RawJournal journal = new RawJournal(dir.resolve("raw-concurrent"), 4)) {
            for (int i = 0; i < threads.length; i++) {
                int th = threads[i];
                List<Run> s;
                List<Run> raw;
                byte[] v = bytes(100);
                try (Producer p = broker == null ? null : producer(broker)) {
                    ProducerRecord r = record(topic, 100);
                    Repeat.Pair pair = Repeat.alternating(o, p == null ? null : () -> SluiceLoads.produce(p, r, th, per),
                            () -> RawLoads.produce(journal, RING, o.waitStrategy(), v, th, per));
                    s = pair.a();
                    raw = pair.b();
                }
                t.row(th + (th == 1 ? " thread" : " threads"), "msg/s", Better.HIGHER, Repeat.sample(s, Run::perSecond),
                        Repeat.sample(raw, Run::perSecond), ref[i], i == 0 ? "one shared producer, until the last ack; " + String.format("%,d", per)
                                + " per thread (the reference's 10,000 last a few ms here)" : null);
                CpuRows.add(t, th + (th == 1 ? " thread " : " threads "), s, raw, i == 0 ? "per acknowledged record, producer threads included" : null);
                bars.category(th + (th == 1 ? " thread" : " threads"), Repeat.median(s, Run::perSecond), Repeat.median(raw, Run::perSecond), ref[i]);
            }
        }
        tables.add(t.build());
        charts.add(bars);
    }

    // Benchmarks 3 and 4: network round trips through the Netty broker and its Java client, beside a raw echo.
    private void network(BenchOptions o, Broker broker, List<Table> tables, List<Chart> charts, List<String> notes) throws Exception {
        int requests = o.size(5_000, 1_000);
        int fetches = o.size(5_000, 500);
        byte[] payload = bytes(100);
        int fetchRecords = FETCH_RECORDS;
        String topic = "network";
        Table.Builder t = Table.builder("3. Network round trip: " + String.format("%,d", requests) + " sync requests × 100 B, one client",
                "plain-socket echo of the same 100 B on 127.0.0.1");
        Table.Builder f = Table.builder("3. Network fetch round trip: " + String.format("%,d", fetches) + " fetches of " + FETCH_RECORDS
                + " × 100 B at random offsets, one client", "plain-socket round trip: " + FETCH_REQUEST_BYTES + " B request, "
                + String.format("%,d", FETCH_RECORDS * 100) + " B reply (the fetch's payload bytes) on 127.0.0.1");
        Table.Builder m = Table.builder("4. Multi-client network: 500 sync produce requests × 100 B per client (1 client: table 3's runs)", "plain-socket echo on 127.0.0.1");
        BarChart bars = new BarChart("stream-processor-clients.svg", "stream-processor: concurrent network clients (100 B sync requests)", "req/s",
                List.of("Sluice", "raw echo", "reference"));
        PercentilePlot plot = new PercentilePlot("stream-processor-network-rtt.svg", "stream-processor: network round trip (100 B)", "µs", 1_000);
        SluiceNetLoads net = null;
        if (broker != null) {
            broker.createTopic(TopicConfig.of(topic, 1));
            net = new SluiceNetLoads(broker);
            notes.add("Network: Sluice's Netty broker (`BrokerServer`, " + net.transport() + " transport) on 127.0.0.1 in the "
                    + "same JVM as its Java clients (`RemoteProducer` with linger 0 and acks=JOURNAL; `RemoteConsumer` with "
                    + "maxPollRecords " + FETCH_RECORDS + ", maxPollBytes " + SluiceNetLoads.fetchMaxBytes(FETCH_RECORDS, 100)
                    + " — room for " + FETCH_RECORDS + " records stored one per batch, as the sync produce runs store them — near the "
                    + "reference's ~100 records per fetch). A produce round trip is `send(record).get()`; a fetch round trip is `seek` "
                    + "to a random offset then `poll` until those " + FETCH_RECORDS + " records arrived (checked: exactly those records). "
                    + "A fetch ships the stored record batches whole (FETCH v1) from the one holding the offset: one round trip here, "
                    + "two if that batch ended before the " + FETCH_RECORDS + " records. The fetch has its own baseline: a plain-socket "
                    + "round trip moving the " + FETCH_RECORDS + " records' payload bytes back.");
        }
        try (LoopbackEcho server = new LoopbackEcho()) {
            SluiceNetLoads n = net;
            // Sluice's two clients and the socket baseline in turns (medians of alternating runs)
            List<List<Run>> produced = Repeat.inTurns(o, o.warmups(),
                    n == null ? null : () -> n.syncProduce(SluiceNetLoads.Client.REMOTE, topic, 1, requests, payload),
                    n == null ? null : () -> n.syncProduce(SluiceNetLoads.Client.CALLER_THREAD, topic, 1, requests, payload),
                    () -> NetLoads.echo(server, 1, requests, payload));
            List<Run> produce = produced.get(0);
            List<Run> direct = produced.get(1);
            List<Run> echo = produced.get(2);
            long[] seed = {1};
            Repeat.Pair fetched = Repeat.alternating(o, n == null ? null
                            : () -> n.fetch(broker, new TopicPartition(topic, 0), fetches, fetchRecords, payload.length, seed[0]++),
                    () -> NetLoads.fetchEcho(server, fetches, FETCH_REQUEST_BYTES, fetchRecords * payload.length));
            List<Run> fetch = fetched.a();
            List<Run> fetchEcho = fetched.b();
            t.row("Produce throughput", "req/s", Better.HIGHER, Repeat.sample(produce, Run::perSecond), Repeat.sample(echo, Run::perSecond), 18_511.0,
                    n == null ? NET_MISSING : "one client's sync produce rate: table 4's 1-client rows are these runs");
            latencyRows(t, produce, echo, new int[]{0, 1, 2, 4, 5, 7}, new double[]{33.08, 53.98, 54.55, 68.12, 81.80, 326.26}, "produce RTT", null,
                    ROUND_TRIP_GOALS);
            CpuRows.add(t, "", produce, echo, "per round trip, client and server in this JVM");
            t.row("SyncProducer: produce throughput", "req/s", Better.HIGHER, Repeat.sample(direct, Run::perSecond),
                    Repeat.sample(echo, Run::perSecond), 18_511.0, n == null ? NET_MISSING
                            : "the caller-thread client (`SyncProducer`): writes its request and reads the answer on the calling thread");
            latencyRows(t, direct, echo, new int[]{0, 1, 2, 4, 5, 7}, new double[]{33.08, 53.98, 54.55, 68.12, 81.80, 326.26},
                    "SyncProducer: produce RTT", null, ROUND_TRIP_GOALS);
            CpuRows.add(t, "SyncProducer: ", direct, echo, null);
            f.row("Fetch throughput", "fetches/s", Better.HIGHER, Repeat.sample(fetch, Run::perSecond), Repeat.sample(fetchEcho, Run::perSecond), null,
                    n == null ? NET_MISSING : FETCH_RECORDS + " records per fetch (the reference printed latencies only)");
            latencyRows(f, fetch, fetchEcho, new int[]{0, 1, 2, 4, 5}, new double[]{292.72, 519.12, 398.48, 1_409.09, 3_718.06}, "fetch RTT", null);
            CpuRows.add(f, "", "s per M records", Repeat.sample(fetch, r -> r.cpuPerMillion() / fetchRecords),
                    Repeat.sample(fetchEcho, r -> r.cpuPerMillion() / fetchRecords),
                    "per record fetched (" + FETCH_RECORDS + " per fetch; the baseline moves the same payload bytes), client and server in this JVM");
            if (produce != null) {
                plot.histogram("Sluice produce (acks=journal)", merged(produce));
                plot.histogram("Sluice SyncProducer produce (acks=journal)", merged(direct));
                plot.histogram("Sluice fetch (" + FETCH_RECORDS + " records)", merged(fetch));
            }
            plot.histogram("raw echo (100 B)", merged(echo));
            plot.histogram("raw fetch-sized round trip", merged(fetchEcho));
            int[] clients = {1, 2, 4, 8};
            double[][] ref = {{16_609, 59.8, 116.6}, {31_642, 62.5, 148.7}, {37_082, 95.2, 764.1}, {44_045, 153.4, 2_108.7}};
            for (int i = 0; i < clients.length; i++) {
                int c = clients[i];
                // one client is table 3's measurement (one figure per quantity): its runs, against this table's reference
                List<List<Run>> turns = c == 1 ? produced : Repeat.inTurns(o, o.warmups(),
                        n == null ? null : () -> n.syncProduce(SluiceNetLoads.Client.REMOTE, topic, c, 500, payload),
                        n == null ? null : () -> n.syncProduce(SluiceNetLoads.Client.CALLER_THREAD, topic, c, 500, payload),
                        () -> NetLoads.echo(server, c, 500, payload));
                List<Run> s = turns.get(0);
                List<Run> d = turns.get(1);
                List<Run> raw = turns.get(2);
                String label = c + (c == 1 ? " client" : " clients");
                Row throughput = new Row(label + " throughput", "req/s", Better.HIGHER, Repeat.sample(s, Run::perSecond),
                        Repeat.sample(raw, Run::perSecond), ref[i][0], i == 0 ? (n == null ? NET_MISSING
                        : "1 client: table 3's runs (" + String.format("%,d", requests) + " requests; the reference printed 18,511 "
                        + "req/s there and 16,609 here); 2–8 clients: 500 requests per client") : null);
                m.row(c == 8 ? eightClientGoals(throughput) : throughput);
                m.row(label + " avg", "µs", Better.LOWER, Repeat.sample(s, r -> r.latencyMicros(1)), Repeat.sample(raw, r -> r.latencyMicros(1)), ref[i][1], null);
                m.row(label + " P99", "µs", Better.LOWER, Repeat.sample(s, r -> r.latencyMicros(5)), Repeat.sample(raw, r -> r.latencyMicros(5)), ref[i][2], null);
                CpuRows.add(m, label + " ", s, raw, i == 0 ? "per round trip, clients and server in this JVM" : null);
                Row directThroughput = new Row("SyncProducer: " + label + " throughput", "req/s", Better.HIGHER, Repeat.sample(d, Run::perSecond),
                        Repeat.sample(raw, Run::perSecond), ref[i][0], i == 0 && n != null
                        ? "the caller-thread client (`SyncProducer`), one per client thread, in turns with the rows above and the echo" : null);
                m.row(c == 8 ? eightClientGoals(directThroughput) : directThroughput);
                m.row("SyncProducer: " + label + " P99", "µs", Better.LOWER, Repeat.sample(d, r -> r.latencyMicros(5)),
                        Repeat.sample(raw, r -> r.latencyMicros(5)), ref[i][2], null);
                bars.category(label, Repeat.median(s, Run::perSecond), Repeat.median(raw, Run::perSecond), ref[i][0]);
            }
        } finally {
            if (net != null) {
                net.close();
            }
        }
        plot.referencePoints("reference produce RTT", new TreeMap<>(Map.of(50.0, 54.55, 95.0, 68.12, 99.0, 81.80)));
        plot.referencePoints("reference fetch RTT", new TreeMap<>(Map.of(50.0, 398.48, 95.0, 1_409.09, 99.0, 3_718.06)));
        tables.add(t.build());
        tables.add(f.build());
        tables.add(m.build());
        charts.add(plot);
        charts.add(bars);
    }

    // Benchmark 5: message sizes 64 B – 16 KiB.
    private void sizes(BenchOptions o, Broker broker, TempDir dir, List<Table> tables, List<Chart> charts) throws Exception {
        int[] sizes = {64, 256, 1024, 4096, 16_384};
        double[][] ref = {{344_846, 21.0, 2.8}, {254_697, 62.2, 3.9}, {159_531, 155.8, 6.2}, {59_429, 232.1, 16.8}, {16_714, 261.2, 59.8}};
        Table.Builder t = Table.builder("5. Message size: produce throughput by payload size, 1 producer thread, 4 partitions", RAW_PRODUCE);
        BarChart bars = new BarChart("stream-processor-sizes.svg", "stream-processor: produce throughput by message size", "MiB/s",
                List.of("Sluice", "raw baseline", "reference"));
        String topic = "sizes";
        if (broker != null) {
            broker.createTopic(TopicConfig.of(topic, 4));
        }
        try (RawJournal journal = new RawJournal(dir.resolve("raw-sizes"), 4)) {
            for (int i = 0; i < sizes.length; i++) {
                int size = sizes[i];
                // the same bytes budget for every size (≤ 20,000 messages, ≤ 64 MiB per run)
                int n = Math.min(o.size(200_000, 2_000), (o.quick() ? 8 : 64) * 1024 * 1024 / size);
                List<Run> s;
                List<Run> raw;
                byte[] v = bytes(size);
                try (Producer p = broker == null ? null : producer(broker)) {
                    ProducerRecord r = record(topic, size);
                    Repeat.Pair pair = Repeat.alternating(o, p == null ? null : () -> SluiceLoads.produce(p, r, 1, n),
                            () -> RawLoads.produce(journal, RING, o.waitStrategy(), v, 1, n));
                    s = pair.a();
                    raw = pair.b();
                }
                String label = size >= 1024 ? (size / 1024) + " KiB" : size + " B";
                t.row(label + " throughput", "msg/s", Better.HIGHER, Repeat.sample(s, Run::perSecond), Repeat.sample(raw, Run::perSecond), ref[i][0],
                        String.format("%,d messages per run, 4 partitions, trySend until every acknowledgement", n)
                                + (size == 1024 ? " (1 KiB into 1 partition: table 7's Write; one publish per JMH op: jmh)" : ""));
                t.row(label + " data rate", "MiB/s", Better.HIGHER, Repeat.sample(s, r -> r.mebibytesPerSecond(size)), Repeat.sample(raw, r -> r.mebibytesPerSecond(size)), ref[i][1], null);
                t.rowNotComparable(label + " avg enqueue (trySend call)", "µs", Better.LOWER, Repeat.sample(s, r -> r.latencyMicros(1)),
                        Repeat.sample(raw, r -> r.latencyMicros(1)), ref[i][2], null,
                        "Sluice's figure is the trySend call (enqueue; acknowledged later), the reference's a produce call");
                CpuRows.add(t, label + " ", s, raw, i == 0 ? "per acknowledged record, producer thread included" : null);
                bars.category(label, Repeat.median(s, r -> r.mebibytesPerSecond(size)), Repeat.median(raw, r -> r.mebibytesPerSecond(size)), ref[i][1]);
            }
        }
        tables.add(t.build());
        charts.add(bars);
    }

    // Benchmark 6: consumer groups of 1, 2, 4, 8 members on 4 partitions, 20,000 messages.
    private void groups(BenchOptions o, Broker broker, TempDir dir, List<Table> tables, List<Chart> charts) throws Exception {
        int n = o.size(GROUP_RECORDS, 5_000);
        int[] members = {1, 2, 4, 8};
        double[] ref = {434_198, 574_130, 486_478, 379_590};
        Table.Builder t = Table.builder("6. Consumer groups: " + String.format("%,d", n) + " × 100 B on 4 partitions",
                "plain Chronicle tailers, partitions split over the same number of threads");
        BarChart bars = new BarChart("stream-processor-groups.svg", "stream-processor: consumer group throughput after the first join (4 partitions)", "msg/s",
                List.of("Sluice", "raw baseline"));
        String topic = "groups";
        if (broker != null) {
            broker.createTopic(TopicConfig.of(topic, 4));
            try (Producer p = producer(broker)) {
                SluiceLoads.produce(p, record(topic, 100), 1, n);
            }
        }
        try (RawJournal journal = new RawJournal(dir.resolve("raw-groups"), 4)) {
            RawLoads.produce(journal, RING, o.waitStrategy(), bytes(100), 1, n);
            int[] run = {0};
            for (int i = 0; i < members.length; i++) {
                int m = members[i];
                List<Double> redelivered = new ArrayList<>();
                List<Run> afterJoin = new ArrayList<>();
                Repeat.Pair pair = Repeat.alternating(o, o.size(GROUP_WARMUPS, o.warmups()), broker == null ? null
                                : () -> SluiceLoads.groupConsume(broker, topic, "g" + m + "-" + (run[0]++), m, n,
                                x -> redelivered.add((double) x), nanos -> afterJoin.add(Run.of(n, nanos))),
                        () -> RawLoads.parallelConsume(journal, m, n));
                List<Run> s = pair.a();
                List<Run> raw = pair.b();
                // the measured runs' figures after the join (the warm-ups' come first)
                List<Run> sAfterJoin = s == null ? null : afterJoin.subList(afterJoin.size() - s.size(), afterJoin.size());
                String label = m + (m == 1 ? " consumer" : " consumers");
                t.row(label, "msg/s", Better.HIGHER, Repeat.sample(s, Run::perSecond), null, ref[i],
                        i == 0 ? "a new group per run, timed from subscribe to the last record (joins and rebalances "
                                + "included); " + String.format("%,d", n) + " records per run (the reference's 20,000 last "
                                + "30–50 ms); the raw readers, which join nothing, are set against the next row" : null);
                t.row(label + ", after the first join", "msg/s", Better.HIGHER, Repeat.sample(sAfterJoin, Run::perSecond),
                        Repeat.sample(raw, Run::perSecond), null,
                        i == 0 ? "the same runs timed from the first poll that returned records to the last record, as "
                                + "Kafka's ConsumerPerformance leaves the join out (rebalances while later members join "
                                + "are inside it); the raw readers are timed from their start" : null);
                t.row(label + ": redelivered", "records", Better.LOWER, s == null ? null
                                : io.sluice.bench.report.Sample.of(redelivered.subList(redelivered.size() - s.size(), redelivered.size())),
                        null, null, i == 0 ? "records a member polled again after a rebalance moved their partition (not in the "
                                + "rate; every record arrived at least once, checked by offset)" : null);
                CpuRows.add(t, label + " ", s, raw, i == 0 ? "per record consumed, consumer threads, joins and rebalances included" : null);
                bars.category(label, Repeat.median(sAfterJoin, Run::perSecond), Repeat.median(raw, Run::perSecond));
            }
        }
        tables.add(t.build());
        charts.add(bars);
    }

    // Benchmark 7: storage write, sequential read, random read, 20,000 × 1 KiB.
    private void storage(BenchOptions o, Broker broker, TempDir dir, List<Table> tables, List<Chart> charts) throws Exception {
        int n = o.size(STORAGE_RECORDS, 5_000);
        int reads = o.size(10_000, 2_000);
        List<Run> sWrite;
        List<Run> sRead;
        List<Run> sReadRecords;
        List<Run> sRandom;
        List<Run> rWrite;
        List<Run> rRead;
        List<Run> rRandom;
        String topic = "storage";
        TopicPartition tp = new TopicPartition(topic, 0);
        if (broker != null) {
            broker.createTopic(TopicConfig.of(topic, 1));
        }
        // Sluice and plain Chronicle in turns, run by run, for each of the three loads
        try (RawJournal journal = new RawJournal(dir.resolve("raw-storage"), 1);
             Producer p = broker == null ? null : producer(broker)) {
            byte[] v = bytes(1024);
            long total = (long) n * (o.warmups() + o.iterations());
            // every excerpt the raw side wrote, over all its runs: its random reads pick among as many records as
            // Sluice's, which pick among every offset of the partition (all runs' records), so both read across the
            // same working set
            long[] indexes = new long[Math.toIntExact(total)];
            int[] written = {0};
            ProducerRecord r = record(topic, 1024);
            Repeat.Pair write = Repeat.alternating(o, p == null ? null : () -> SluiceLoads.produce(p, r, 1, n),
                    () -> {
                        Run run = RawLoads.append(journal, v, n, indexes, written[0]);
                        written[0] += n;
                        return run;
                    });
            sWrite = write.a();
            rWrite = write.b();
            List<List<Run>> read = Repeat.inTurns(o, o.size(READ_WARMUPS, o.warmups()),
                    broker == null ? null : () -> SluiceLoads.sequentialRead(broker, tp, total, false),
                    broker == null ? null : () -> SluiceLoads.sequentialRead(broker, tp, total, true),
                    () -> RawLoads.consume(journal, total, 500));
            sRead = read.get(0);
            sReadRecords = read.get(1);
            rRead = read.get(2);
            long[] seed = {1, 1};
            Repeat.Pair random = Repeat.alternating(o, o.size(READ_WARMUPS, o.warmups()), broker == null ? null : () -> SluiceLoads.randomRead(broker, tp, reads, seed[0]++),
                    () -> RawLoads.randomRead(journal, indexes, reads, seed[1]++));
            sRandom = random.a();
            rRandom = random.b();
        }
        Table.Builder t = Table.builder("7. Storage: " + String.format("%,d", n) + " × 1 KiB write, sequential read, "
                + String.format("%,d", reads) + " random reads", "plain Chronicle Queue, one thread (appender / tailer / moveToIndex); it faults in fresh pages on the appending thread "
                        + "(open-source Chronicle has no pretoucher), where Sluice's sluice-pretouch thread reads ahead "
                        + "(journal.pretouch.bytes; its CPU is in Sluice's rows)");
        t.row(new Row("Write, 1 partition", "msg/s", Better.HIGHER, Repeat.sample(sWrite, Run::perSecond), Repeat.sample(rWrite, Run::perSecond), 138_764.0,
                "Sluice: trySend into 1 partition until every acknowledgement (acks=JOURNAL); the 4-partition rate of the same "
                        + "call is table 5's 1 KiB row").withGoal(Goal.timesReference(3)));
        t.row("Write data rate", "MiB/s", Better.HIGHER, Repeat.sample(sWrite, r -> r.mebibytesPerSecond(1024)), Repeat.sample(rWrite, r -> r.mebibytesPerSecond(1024)), 135.51, null);
        t.row("Sequential read", "msg/s", Better.HIGHER, Repeat.sample(sRead, Run::perSecond), Repeat.sample(rRead, Run::perSecond), 221_918.0,
                "Sluice: PartitionReader.readViews over the whole partition (each record copied into the reader's reused "
                        + "buffers, as the raw tailer reads into one)");
        t.row("Sequential read data rate", "MiB/s", Better.HIGHER, Repeat.sample(sRead, r -> r.mebibytesPerSecond(1024)), Repeat.sample(rRead, r -> r.mebibytesPerSecond(1024)), 216.72, null);
        t.row("Sequential read, a ConsumerRecord per record", "msg/s", Better.HIGHER, Repeat.sample(sReadRecords, Run::perSecond),
                Repeat.sample(rRead, Run::perSecond), null,
                "Sluice: PartitionReader.read (new key and value arrays and a ConsumerRecord per record, what Consumer.poll "
                        + "returns); the same turns as the row above");
        // issue 22: a read by offset at most 2× a raw Chronicle read of one excerpt by index, and below the 001 reference
        List<Goal> randomReadGoals = List.of(Goal.timesBaseline(2.0), Goal.timesReference(1.0));
        latencyRows(t, sRandom, rRandom, new int[]{0, 1, 2, 4, 5}, new double[]{4.55, 5.43, 5.34, 5.93, 7.58}, "random read", null,
                java.util.Map.of(1, randomReadGoals, 5, randomReadGoals));
        CpuRows.add(t, "Write ", sWrite, rWrite, "per record written (Sluice: until acknowledged)");
        CpuRows.add(t, "Sequential read ", sRead, rRead, "per record read");
        CpuRows.add(t, "Sequential read (ConsumerRecord) ", sReadRecords, rRead, "per record read");
        CpuRows.add(t, "Random read ", sRandom, rRandom, "per read");
        tables.add(t.build());
        BarChart bars = new BarChart("stream-processor-storage.svg", "stream-processor: storage, 1 KiB messages", "msg/s",
                List.of("Sluice", "raw Chronicle Queue", "reference"));
        bars.category("write", Repeat.median(sWrite, Run::perSecond), Repeat.median(rWrite, Run::perSecond), 138_764.0);
        bars.category("sequential read", Repeat.median(sRead, Run::perSecond), Repeat.median(rRead, Run::perSecond), 221_918.0);
        charts.add(bars);
    }

    /** Adds "{prefix} Min/Avg/..." rows in µs for the given {@link LatencyRows#METRICS} indexes. */
    /** Issue 22: a one-client sync produce round trip with P50 ≤ 1.5× and P99 ≤ 2× the buffered echo's. */
    private static final java.util.Map<Integer, List<Goal>> ROUND_TRIP_GOALS = java.util.Map.of(
            2, List.of(Goal.timesBaseline(1.5)), 5, List.of(Goal.timesBaseline(2.0)));

    /**
     * Eight clients' sync produce rate: ≥ 100,000 req/s (issue 12), ≥ two thirds of the echo server's with eight clients
     * measured beside it and ≥ 1.5× the 001 reference (issue 22).
     */
    private static Row eightClientGoals(Row throughput) {
        return throughput.withGoal(Goal.absolute(100_000)).withGoal(Goal.timesBaseline(2.0 / 3.0)).withGoal(Goal.timesReference(1.5));
    }

    private static void latencyRows(Table.Builder t, List<Run> sluice, List<Run> raw, int[] metrics, double[] ref, String prefix,
                                    String notComparable) {
        latencyRows(t, sluice, raw, metrics, ref, prefix, notComparable, java.util.Map.of());
    }

    /** As above, with goals on some rows: {@link LatencyRows#METRICS} index → that row's goals. */
    private static void latencyRows(Table.Builder t, List<Run> sluice, List<Run> raw, int[] metrics, double[] ref, String prefix,
                                    String notComparable, java.util.Map<Integer, List<Goal>> goals) {
        for (int i = 0; i < metrics.length; i++) {
            int metric = metrics[i];
            Row row = new Row(prefix + " " + LatencyRows.METRICS[metric], "µs", Better.LOWER,
                    Repeat.sample(sluice, r -> r.latencyMicros(metric)), Repeat.sample(raw, r -> r.latencyMicros(metric)), ref[i], null);
            if (notComparable != null) {
                row = row.notComparable(notComparable);
            }
            for (Goal g : goals.getOrDefault(metric, List.of())) {
                row = row.withGoal(g);
            }
            t.row(row);
        }
    }

    private static org.HdrHistogram.Histogram merged(List<Run> runs) {
        List<org.HdrHistogram.Histogram> hs = new ArrayList<>();
        for (Run r : runs) {
            hs.add(r.latency());
        }
        return LatencyRows.merged(hs);
    }
}
