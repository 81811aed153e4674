package io.sluice.faults;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.core.Acks;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.net.client.RemoteProducer;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Issue 24's soak: steady load held for a long time, nothing lost, nothing leaking. {@code sluice broker} (its
 * Netty paths with {@code -Dio.netty.leakDetection.level=paranoid}, given by {@code scripts/soak.sh}) takes events
 * from binary producers and HTTP producers; a consumer group reads them; two ingest pipelines land them in
 * ClickHouse ({@code offset-range} in a {@code sluice ingest} process, {@code coalescing} inside the broker). No
 * fault is injected. Every minute the broker and the ingest process are sampled ({@link ProcessStats}: RSS, heap
 * and what it is made of (anonymous, mapped files, of which journal pages, shared; NMT committed per category), heap
 * after a full GC, direct memory, threads, open fds) with the minute's produce and end-to-end latency percentiles
 * ({@link LoadSamples}), as a line of {@code soak.csv}; at the end {@code soak.svg} plots them, the checker counts
 * acknowledged, lost and duplicated events per table, and every process log is searched for Netty's
 * {@code LEAK:} reports.
 *
 * <pre>
 * Soak --minutes N [--rate EVENTS_PER_S | --share FRACTION] [--seed S] [--run-dir DIR]
 * </pre>
 * {@code --share} first measures capacity (10 s of binary producers without pacing, every event recorded and
 * checked like the rest) and then holds that fraction of it; {@code --rate} gives the total rate directly. One fifth
 * of the rate goes through HTTP. Exits 1 when an acknowledged event is lost, a row is duplicated where exactly-once
 * is stated (journal), or a leak is reported.
 */
public final class Soak {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int PRODUCERS = 2;
    private static final int MEMBERS = 2;
    /** The minute of the NMT baseline and the first smaps / class histogram (after the calibration's burst). */
    private static final int BASELINE_MINUTE = 2;

    private Soak() {
    }

    public static void main(String[] args) throws Exception {
        long minutes = 0;
        double share = 0.1;
        int rate = -1;
        long seed = 20261125L;
        Path runDir = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                System.out.println("usage: soak.sh --minutes N [--rate EVENTS_PER_S | --share FRACTION (default 0.1)] [--seed S] [--run-dir DIR]");
                return;
            }
            if (i + 1 >= args.length) {
                System.err.println("soak: missing value for " + a);
                System.exit(2);
            }
            String v = args[++i];
            switch (a) {
                case "--minutes" -> minutes = Long.parseLong(v);
                case "--rate" -> rate = Integer.parseInt(v);
                case "--share" -> share = Double.parseDouble(v);
                case "--seed" -> seed = Long.parseLong(v);
                case "--run-dir" -> runDir = Path.of(v);
                default -> {
                    System.err.println("soak: unknown option " + a);
                    System.exit(2);
                }
            }
        }
        if (minutes < 1 || share <= 0 || share > 1) {
            System.err.println("soak: --minutes must be at least 1 and --share in (0, 1]");
            System.exit(2);
        }
        if (runDir == null) {
            runDir = Path.of("target", "soak", "run-" + Instant.now().toString().replace(':', '-'));
        }
        boolean passed = run(runDir.toAbsolutePath(), minutes, rate, share, seed, System.out);
        System.exit(passed ? 0 : 1);
    }

    /**
     * Runs the soak; true when nothing acknowledged was lost, nothing duplicated where exactly-once is stated, and no
     * leak was reported.
     */
    public static boolean run(Path runDir, long minutes, int givenRate, double share, long seed, PrintStream out) throws Exception {
        Files.createDirectories(runDir);
        // the rate is per producer in TortureConfig; it is set once the total is known
        TortureConfig base = new TortureConfig(seed, Duration.ofMinutes(minutes), Set.of("journal", "coalescing"),
                EnumSet.noneOf(FaultKind.class), PRODUCERS, 1, MEMBERS, 0, 4, 10_000, 5_000, Duration.ofMinutes(5), runDir, java.util.Map.of());
        out.println("[soak] " + minutes + " min, run dir " + runDir + ", load average " + loadAverage());
        try (History history = new History(runDir.resolve("history.jsonl"));
             Cluster cluster = new Cluster(base)) {
            // a soak stopped with SIGTERM (or Ctrl-C) stops its broker and ingest processes too
            Thread stopChildren = new Thread(() -> {
                cluster.ingest().kill();
                cluster.broker().kill();
            }, "soak-stop-children");
            Runtime.getRuntime().addShutdownHook(stopChildren);
            cluster.start();
            AtomicLong calibrationIds = new AtomicLong();
            int total = givenRate > 0 ? givenRate : (int) Math.max(10, share * capacity(cluster, history, calibrationIds, out));
            int binaryPerProducer = Math.max(1, total * 4 / 5 / PRODUCERS);
            int httpPerSecond = Math.max(10, total - binaryPerProducer * PRODUCERS);
            TortureConfig config = base.withLoad(PRODUCERS, binaryPerProducer, MEMBERS);
            out.println("[soak] holding " + (binaryPerProducer * PRODUCERS + httpPerSecond) + " events/s: " + PRODUCERS
                    + " binary producers x " + binaryPerProducer + "/s, HTTP " + httpPerSecond + "/s, " + MEMBERS
                    + " group members, ingest offset-range (sluice ingest) and coalescing (in the broker)");
            long expectedIds = (binaryPerProducer * (long) PRODUCERS + httpPerSecond) * 60 * (minutes + 2) + 1_000_000;
            LoadSamples samples = new LoadSamples((int) Math.min(Integer.MAX_VALUE - 8, expectedIds));
            Path csv = runDir.resolve("soak.csv");
            List<String> lines = new ArrayList<>();
            lines.add("minute,acked_total,broker_rss_mb,broker_heap_after_gc_mb,broker_direct_mb,broker_threads,broker_fds,"
                    + "ingest_rss_mb,ingest_heap_after_gc_mb,ingest_direct_mb,ingest_threads,ingest_fds,"
                    + "produce_p50_ms,produce_p99_ms,produce_p999_ms,http_p50_ms,http_p99_ms,e2e_p50_ms,e2e_p99_ms,e2e_max_ms,load_avg_1m,"
                    + splitHeader("broker") + "," + splitHeader("ingest"));
            Workload workload = new Workload(config, cluster.bootstrap(), history, samples);
            workload.startIdsAt(calibrationIds.get());
            HttpProducer http = new HttpProducer(cluster.httpPort(), httpPerSecond, workload, history, samples);
            try (workload; http) {
                workload.start();
                http.start();
                long start = System.nanoTime();
                for (int minute = 1; minute <= minutes; minute++) {
                    long due = start + TimeUnit.MINUTES.toNanos(minute);
                    while (due - System.nanoTime() > 0) {
                        LockSupport.parkNanos(Math.min(due - System.nanoTime(), TimeUnit.SECONDS.toNanos(1))); // the sampling period
                    }
                    LoadSamples.Interval lat = samples.drain();
                    ProcessStats b = ProcessStats.of(cluster.broker().pid());
                    ProcessStats g = ProcessStats.of(cluster.ingest().pid());
                    String line = minute + "," + workload.acked() + "," + mb(b.rssBytes()) + "," + mb(b.heapAfterGcBytes()) + ","
                            + mb(b.directBytes()) + "," + b.threads() + "," + b.openFds() + "," + mb(g.rssBytes()) + ","
                            + mb(g.heapAfterGcBytes()) + "," + mb(g.directBytes()) + "," + g.threads() + "," + g.openFds() + ","
                            + ms(lat.produce().p50()) + "," + ms(lat.produce().p99()) + "," + ms(lat.produce().p999()) + ","
                            + ms(lat.http().p50()) + "," + ms(lat.http().p99()) + "," + ms(lat.endToEnd().p50()) + ","
                            + ms(lat.endToEnd().p99()) + "," + ms(lat.endToEnd().max()) + "," + loadAverage() + ","
                            + split(b) + "," + split(g);
                    lines.add(line);
                    if (minute == BASELINE_MINUTE || minute == minutes) {
                        snapshot(runDir, cluster, minute == BASELINE_MINUTE ? "baseline" : "end");
                    }
                    Files.write(csv, lines, StandardCharsets.UTF_8);
                    out.println("[soak] " + line);
                }
                out.println("[soak] load over; settling");
                http.stop();
                workload.stopProducing();
                // members still append: read the lines flushed whole, not the part of one the writer's buffer spilled
                Checker.Facts facts = Checker.read(history.file(), history.flushLines());
                Torture.settle(config, cluster, workload, facts.acked, out);
                workload.stopConsuming();
            }
            history.flush();
            Report report = Checker.check(seed, history.file(), cluster.tables(), MEMBERS);
            List<String> leaks = leaks(runDir);
            Files.writeString(runDir.resolve("soak.svg"), SoakPlot.svg(lines, "Sluice soak, " + minutes + " min"), StandardCharsets.UTF_8);
            String text = report.format() + "Netty LEAK reports (paranoid): " + leaks.size() + "\n"
                    + String.join("\n", leaks.subList(0, Math.min(5, leaks.size()))) + "\nHTTP requests failed: "
                    + http.failures() + "\ncsv " + csv + ", plot " + runDir.resolve("soak.svg") + "\n";
            out.print(text);
            Files.writeString(runDir.resolve("report.txt"), text, StandardCharsets.UTF_8);
            // duplicates fail the soak where exactly-once is stated (journal); coalescing is at-least-once by design:
            // an INSERT that outlives insert.timeout.ms on a slow machine is retried and its rows may land twice, which
            // is reported above but is a figure of the machine's speed, not a broken guarantee
            boolean clean = report.tables().stream().allMatch(t -> t.lost() == 0 && (!t.exactlyOnce() || t.duplicated() == 0));
            return report.passed() && clean && leaks.isEmpty() && report.acked() > 0;
        }
    }

    /** Events per second the binary producers get acknowledged without pacing, over 10 s (recorded like the rest). */
    private static double capacity(Cluster cluster, History history, AtomicLong nextId, PrintStream out) throws InterruptedException {
        AtomicLong acked = new AtomicLong();
        Semaphore window = new Semaphore(Workload.MAX_OUTSTANDING);
        long nanos = TimeUnit.SECONDS.toNanos(10);
        try (RemoteProducer producer = new RemoteProducer(cluster.bootstrap(), ProducerConfig.builder().acks(Acks.JOURNAL).build())) {
            long end = System.nanoTime() + nanos;
            while (System.nanoTime() - end < 0) {
                if (!window.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    continue;
                }
                long id = nextId.getAndIncrement();
                producer.send(ProducerRecord.of(Cluster.TOPIC, null, "{\"id\":" + id + ",\"p\":99}"), (partition, offset, error) -> {
                    window.release();
                    if (error == null) {
                        acked.incrementAndGet();
                        history.append("calibration", "send", "ok", n -> n.put("id", id).put("partition", partition).put("offset", offset));
                    } else {
                        history.append("calibration", "send", "fail", n -> n.put("id", id).put("error", error.getClass().getSimpleName()));
                    }
                });
            }
            producer.flush();
        }
        window.tryAcquire(Workload.MAX_OUTSTANDING, 60, TimeUnit.SECONDS);
        double perSecond = acked.get() * 1e9 / nanos;
        out.println("[soak] capacity: " + acked.get() + " events acknowledged in 10 s without pacing = " + Math.round(perSecond) + " events/s");
        return perSecond;
    }

    /** The RSS split and NMT columns of one process in soak.csv. */
    private static String splitHeader(String process) {
        StringBuilder sb = new StringBuilder();
        for (String c : new String[]{"rss_anon", "rss_file", "rss_shmem", "journal_mapped", "nmt_total", "nmt_heap", "nmt_metaspace",
                "nmt_threads", "nmt_code", "nmt_gc", "nmt_other_native"}) {
            sb.append(sb.length() == 0 ? "" : ",").append(process).append('_').append(c).append("_mb");
        }
        return sb.toString();
    }

    private static String split(ProcessStats s) {
        ProcessStats.Nmt n = s.nmt();
        return String.join(",", mb(s.rssAnonBytes()), mb(s.rssFileBytes()), mb(s.rssShmemBytes()), mb(s.journalMappedBytes()),
                mb(n.total()), mb(n.heap()), mb(n.metaspace()), mb(n.threads()), mb(n.code()), mb(n.gc()), mb(n.otherNative()));
    }

    /**
     * What memory is made of at two times, to tell growth apart: at minute {@value #BASELINE_MINUTE} an NMT baseline
     * is set in each process, and its smaps and class histogram are kept; at the last minute the NMT diff against that
     * baseline, smaps and class histogram again ({@code <process>-<baseline|end>.smaps}, {@code .histo},
     * {@code <process>-nmt-diff.txt} in the run directory).
     */
    private static void snapshot(Path runDir, Cluster cluster, String when) throws IOException {
        for (var p : List.of(java.util.Map.entry("broker", cluster.broker().pid()), java.util.Map.entry("ingest", cluster.ingest().pid()))) {
            long pid = p.getValue();
            if (pid <= 0) {
                continue;
            }
            try {
                Files.copy(Path.of("/proc", Long.toString(pid), "smaps"), runDir.resolve(p.getKey() + "-" + when + ".smaps"),
                        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException e) {
                // the process is gone
            }
            String histo = ProcessStats.jcmd(pid, "GC.class_histogram");
            Files.writeString(runDir.resolve(p.getKey() + "-" + when + ".histo"),
                    String.join("\n", histo.lines().limit(60).toList()) + "\n", StandardCharsets.UTF_8);
            if (when.equals("baseline")) {
                ProcessStats.jcmd(pid, "VM.native_memory", "baseline");
            } else {
                Files.writeString(runDir.resolve(p.getKey() + "-nmt-diff.txt"), ProcessStats.jcmd(pid, "VM.native_memory", "summary.diff"),
                        StandardCharsets.UTF_8);
            }
        }
    }

    private static List<String> leaks(Path runDir) throws IOException {
        List<String> out = new ArrayList<>();
        try (var files = Files.list(runDir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".log")).toList()) {
                for (String line : Files.readAllLines(f, StandardCharsets.ISO_8859_1)) {
                    if (line.contains("LEAK:")) {
                        out.add(f.getFileName() + ": " + line);
                    }
                }
            }
        }
        return out;
    }

    private static String mb(long bytes) {
        return bytes < 0 ? "" : String.format("%.1f", bytes / 1048576.0);
    }

    private static String ms(long micros) {
        return micros < 0 ? "" : String.format("%.2f", micros / 1000.0);
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (IOException e) {
            return "";
        }
    }

    /**
     * Posts NDJSON batches to {@code /v1/topics/events/events?acks=journal} ten times a second on its own thread,
     * recording a {@code send} op per event with the partition and offset of the answer.
     */
    static final class HttpProducer implements AutoCloseable {
        private final int port;
        private final int perSecond;
        private final Workload workload;
        private final History history;
        private final LoadSamples samples;
        private final AtomicLong failures = new AtomicLong();
        private final Thread thread;
        private volatile boolean running = true;

        HttpProducer(int port, int perSecond, Workload workload, History history, LoadSamples samples) {
            this.port = port;
            this.perSecond = perSecond;
            this.workload = workload;
            this.history = history;
            this.samples = samples;
            this.thread = new Thread(this::run, "soak-http-producer");
        }

        void start() {
            thread.start();
        }

        long failures() {
            return failures.get();
        }

        private void run() {
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            URI uri = URI.create("http://127.0.0.1:" + port + "/v1/topics/" + Cluster.TOPIC + "/events?acks=journal");
            int perBatch = Math.max(1, perSecond / 10);
            long period = TimeUnit.MILLISECONDS.toNanos(100);
            long next = System.nanoTime();
            while (running) {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait); // pacing of the load, not synchronisation
                }
                next += period;
                long[] ids = new long[perBatch];
                StringBuilder body = new StringBuilder();
                long sentAt = System.nanoTime();
                for (int i = 0; i < perBatch; i++) {
                    ids[i] = workload.nextId();
                    samples.sent(ids[i], sentAt);
                    body.append("{\"id\":").append(ids[i]).append(",\"p\":100}\n");
                }
                try {
                    HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
                            .header("Content-Type", "application/x-ndjson")
                            .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(), HttpResponse.BodyHandlers.ofString());
                    if (r.statusCode() != 200) {
                        throw new IOException("HTTP " + r.statusCode() + ": " + r.body());
                    }
                    samples.producedOverHttp(System.nanoTime() - sentAt);
                    JsonNode offsets = JSON.readTree(r.body()).path("offsets");
                    for (int i = 0; i < perBatch; i++) {
                        long id = ids[i];
                        JsonNode o = offsets.get(i);
                        workload.acknowledged();
                        history.append("http", "send", "ok", n -> n.put("id", id).put("partition", o.path("partition").asInt())
                                .put("offset", o.path("offset").asLong()));
                    }
                } catch (IOException | RuntimeException e) {
                    failures.incrementAndGet();
                    for (long id : ids) {
                        history.append("http", "send", "fail", n -> n.put("id", id).put("error", String.valueOf(e)));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }

        void stop() {
            running = false;
            try {
                thread.join(TimeUnit.SECONDS.toMillis(60));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void close() {
            stop();
        }
    }
}
