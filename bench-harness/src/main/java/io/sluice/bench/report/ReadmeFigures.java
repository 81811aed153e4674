package io.sluice.bench.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * README's benchmark figures, generated from the committed run ({@code bench-harness/results/console.log}, the same
 * run as {@code REPORT.md}): each block replaces what lies between {@code <!-- readme-figures:NAME -->} and
 * {@code <!-- /readme-figures:NAME -->}. {@code scripts/readme-figures} rewrites README.md; {@code ReadmeFiguresTest}
 * fails when README.md differs from what this class renders.
 *
 * <p>Every cell is a row of the report, selected by scenario, table title prefix and metric; a selected row missing
 * from the run is printed as "not in this run", never filled in by hand.
 */
public final class ReadmeFigures {

    /** One README line: a report row, by scenario, the start of its table's title, and its metric. */
    record Pick(String label, String scenario, String tablePrefix, String metric) {
    }

    static final List<Pick> BENCHMARKS = List.of(
            new Pick("network produce, 3 M × 100 B, 4 partitions, one client", "kafka-peer", "Network produce", "throughput"),
            new Pick("network consume, the same records", "kafka-peer", "Network consume", "throughput"),
            new Pick("broker CPU, network produce", "kafka-peer", "Network produce", "CPU, broker (user + sys)"),
            new Pick("broker CPU, network consume", "kafka-peer", "Network consume", "CPU, broker (user + sys)"),
            new Pick("direct produce, 100 B, 4 partitions, acks=journal", "stream-processor", "1. Direct produce", "Throughput"),
            new Pick("direct consume", "stream-processor", "1. Direct consume", "Throughput"),
            new Pick("storage write, 1 KiB, journaled, 1 partition", "stream-processor", "7. Storage", "Write, 1 partition"),
            new Pick("sequential read, 1 KiB, 1 partition, PartitionReader.readViews", "stream-processor", "7. Storage", "Sequential read"),
            new Pick("consumer groups, 4 consumers on 4 partitions, from subscribe (joins included)", "stream-processor", "6. Consumer groups", "4 consumers"),
            new Pick("consumer groups, 4 consumers on 4 partitions, after the first join", "stream-processor", "6. Consumer groups", "4 consumers, after the first join"),
            new Pick("network sync produce, 100 B, P50 round trip", "stream-processor", "3. Network round trip", "produce RTT P50"),
            new Pick("network sync produce, 100 B, P50 round trip, JMH sample time", "jmh", "NetworkProduceBenchmark", "P50 round trip (JMH sample time)"),
            new Pick("network sync produce with SyncProducer (I/O on the caller's thread), P50 round trip", "stream-processor", "3. Network round trip", "SyncProducer: produce RTT P50"),
            new Pick("network fetch of 100 records at a random offset, P50", "stream-processor", "3. Network fetch", "fetch RTT P50"),
            new Pick("8 network clients, sync produce", "stream-processor", "4. Multi-client", "8 clients throughput"),
            new Pick("8 network clients, sync produce with SyncProducer", "stream-processor", "4. Multi-client", "SyncProducer: 8 clients throughput"),
            new Pick("JMH bus publish → subscriber, 1 producer, memory-only topic", "jmh", "BusPublishBenchmark", "1 producer, memory-only topic"),
            new Pick("JMH journal append, 100 B, one slot per event", "jmh", "JournalAppendBenchmark", "100 B events, one ring slot each"),
            new Pick("JMH journal append, 100 B, producer batching", "jmh", "JournalAppendBenchmark", "100 B events, producer batching (linger 1 ms)"),
            new Pick("JMH publish allocation, journaled topic", "jmh", "BusPublishBenchmark", "1 producer, journaled: allocated"),
            new Pick("event bus burst 15,000, 1P/1C, memory-only, P99", "event-bus", "Burst load, 15,000 events at once — 1 partition", "memory-only P99"),
            new Pick("event bus burst 15,000, 1P/1C, journaled, P99", "event-bus", "Burst load, 15,000 events at once — 1 partition", "journaled P99"),
            new Pick("event bus burst 15,000, 4P/4C, memory-only, P99", "event-bus", "Burst load, 15,000 events at once — 4 partitions", "memory-only P99"),
            new Pick("event bus sustained 10,000/s, 1P/1C, memory-only, P99", "event-bus", "Sustained load, 50,000 events at 10,000/s — 1 partition", "memory-only P99"),
            new Pick("event bus sustained 10,000/s, 1P/1C, memory-only, P99.9", "event-bus", "Sustained load, 50,000 events at 10,000/s — 1 partition", "memory-only P99.9"),
            new Pick("HTTP, one event per request, wrk -c32, acks=journal", "ingest-stages", "Sluice's HTTP endpoint", "requests/s"),
            new Pick("Redis Streams transport, 100,000 msgs at 5,708/s, P99", "redis-e2e", "100,000 messages at 5,708", "P99 latency"),
            new Pick("Redis Streams transport, 100,000 msgs at 5,708/s, CPU", "redis-e2e", "100,000 messages at 5,708", "Process CPU (publisher thread included)"),
            new Pick("Redis Streams transport at 10× (57,080/s), P99", "redis-e2e", "10× the reference's best rate", "P99 latency"),
            new Pick("ingest: sync insert (01), writes/s (not HTTP requests)", "ingest-stages", "The reference's stage table", "01 sync insert throughput"),
            new Pick("ingest: coalescing, landed / RowBinary ceiling", "ingest-stages", "The reference's stage table", "03 coalescing landed / raw RowBinary ceiling"),
            new Pick("ingest: worker pool, landed / RowBinary ceiling", "ingest-stages", "The reference's stage table", "05 worker pool landed / raw RowBinary ceiling"),
            new Pick("ingest: journal (offset-range, exactly-once), landed / JSONEachRow ceiling (the format it sends)", "ingest-stages",
                    "The reference's stage table", "06 journal (Sluice) landed / raw JSONEachRow ceiling (the format it sends)"));

    static final List<String> STAGES = List.of("01 sync insert", "02 async insert (fire-and-forget)", "03 coalescing",
            "04 Redis-stream buffer", "05 worker pool", "06 journal (Sluice)");

    private ReadmeFigures() {
    }

    /** {@code ReadmeFigures README_MD RESULTS_DIR}: rewrites the README's blocks from that run. */
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: ReadmeFigures README_MD RESULTS_DIR");
            System.exit(2);
        }
        Path readme = Path.of(args[0]);
        String doc = Files.readString(readme, StandardCharsets.UTF_8);
        String generated = withBlocks(doc, blocks(Path.of(args[1])));
        Files.writeString(readme, generated, StandardCharsets.UTF_8);
        System.out.println(doc.equals(generated) ? readme + ": unchanged" : readme + ": figures rewritten from " + args[1]);
    }

    /** The blocks rendered from the run in {@code resultsDir} (its console.log and REPORT.md). */
    public static Map<String, String> blocks(Path resultsDir) throws IOException {
        List<ScenarioResult> run = ResultsLog.read(resultsDir.resolve("console.log"));
        String source = source(resultsDir.resolve("REPORT.md"));
        Map<String, String> blocks = new LinkedHashMap<>();
        blocks.put("benchmarks", benchmarks(run, source));
        blocks.put("ingest", ingest(run, source));
        return blocks;
    }

    /** Replaces each block's body in {@code doc}; a block whose markers are missing is an error naming it. */
    public static String withBlocks(String doc, Map<String, String> blocks) {
        String result = doc;
        for (Map.Entry<String, String> e : blocks.entrySet()) {
            String open = "<!-- readme-figures:" + e.getKey() + " -->\n";
            String close = "<!-- /readme-figures:" + e.getKey() + " -->";
            int a = result.indexOf(open);
            int b = result.indexOf(close);
            if (a < 0 || b < a) {
                throw new IllegalArgumentException("README has no block " + open.strip() + " … " + close);
            }
            result = result.substring(0, a + open.length()) + e.getValue() + result.substring(b);
        }
        return result;
    }

    static String benchmarks(List<ScenarioResult> run, String source) {
        StringBuilder b = new StringBuilder();
        b.append(source).append("\n\n");
        b.append("| workload | unit | Sluice median [min–max] | same-run baseline or peer | reference | Sluice vs reference "
                + "| Sluice vs baseline | goal |\n|---|---|--:|--:|--:|---|---|---|\n");
        for (Pick p : BENCHMARKS) {
            Optional<Row> found = find(run, p.scenario(), p.tablePrefix(), p.metric());
            if (found.isEmpty()) {
                b.append("| ").append(p.label()).append(" | | not in this run | | | | | |\n");
                continue;
            }
            Row r = found.get();
            b.append("| ").append(p.label()).append(" | ").append(r.unit()).append(" | ")
                    .append(r.sluice() == null ? "not available" : r.sluice().describe()).append(" | ")
                    .append(r.baseline() == null ? "—" : r.baseline().describe()).append(" | ")
                    .append(r.reference() == null ? "—" : Numbers.format(r.reference())).append(" | ")
                    .append(r.verdict().replace("|", "\\|")).append(" | ").append(r.baselineVerdictText()).append(" | ")
                    .append(r.goalText()).append(" |\n");
        }
        return b.toString();
    }

    static String ingest(List<ScenarioResult> run, String source) {
        StringBuilder b = new StringBuilder();
        b.append(source).append("\n\n");
        b.append("| stage | throughput | avg / P99 latency (ms) | landed rows/s | ingest→queryable P50 (ms) "
                + "| reference throughput, avg / P99 (ms) |\n|---|--:|--:|--:|--:|--:|\n");
        String table = "The reference's stage table";
        for (String stage : STAGES) {
            Optional<Row> thr = find(run, "ingest-stages", table, stage + " throughput");
            if (thr.isEmpty()) {
                b.append("| ").append(stage).append(" | not in this run | | | | |\n");
                continue;
            }
            Optional<Row> avg = find(run, "ingest-stages", table, stage + " avg latency");
            Optional<Row> p99 = find(run, "ingest-stages", table, stage + " P99 latency");
            Optional<Row> landed = find(run, "ingest-stages", table, stage + " landed rows/s");
            Optional<Row> queryable = find(run, "ingest-stages", table, stage + " ingest→queryable P50");
            b.append("| ").append(stage).append(" | ").append(median(thr)).append(' ').append(thr.get().unit())
                    .append(" | ").append(median(avg)).append(" / ").append(median(p99)).append(" | ")
                    .append(median(landed)).append(" | ").append(median(queryable)).append(" | ")
                    .append(reference(thr)).append(", ").append(reference(avg)).append(" / ").append(reference(p99))
                    .append(" |\n");
        }
        return b.toString();
    }

    private static String median(Optional<Row> r) {
        return r.isEmpty() || r.get().sluice() == null ? "—" : Numbers.format(r.get().sluice().median());
    }

    private static String reference(Optional<Row> r) {
        return r.isEmpty() || r.get().reference() == null ? "—" : Numbers.format(r.get().reference());
    }

    static Optional<Row> find(List<ScenarioResult> run, String scenario, String tablePrefix, String metric) {
        return run.stream().filter(s -> s.scenario().equals(scenario)).flatMap(s -> s.tables().stream())
                .filter(t -> t.title().startsWith(tablePrefix)).flatMap(t -> t.rows().stream())
                .filter(r -> r.metric().equals(metric)).findFirst();
    }

    /** "Generated from the run of DATE at commit C (…)" from REPORT.md's environment lines. */
    static String source(Path report) throws IOException {
        String date = "unknown date";
        String commit = "unknown commit";
        String command = "";
        for (String line : Files.readAllLines(report, StandardCharsets.UTF_8)) {
            if (line.startsWith("- date: ")) {
                date = line.substring("- date: ".length());
            } else if (line.startsWith("- commit: ")) {
                commit = line.substring("- commit: ".length());
            } else if (line.startsWith("- command: ")) {
                command = line.substring("- command: ".length());
            }
        }
        return "Generated by `scripts/readme-figures` from the run in `bench-harness/results/` (" + date + ", commit "
                + commit + (command.isEmpty() ? "" : ", " + command) + "); medians of that run, verdicts by the report's rules.";
    }
}
