package io.sluice.bench.scenario;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.net.http.HttpApiConfig;
import io.sluice.net.http.HttpApiServer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Sluice's HTTP endpoint taking one event per request from a real load generator: {@code wrk} (Debian package
 * {@code wrk}) in its own process, keep-alive connections, each request a {@code POST /v1/topics/http/events?acks=journal}
 * with a one-line NDJSON body, answered once the event is in the memory-mapped journal. The broker and its
 * {@link HttpApiServer} run in the benchmark JVM on 127.0.0.1 (port 0).
 *
 * <p>Every run is checked: wrk must report no socket error and no non-2xx answer, and the journal must hold at least
 * the requests wrk completed (it may hold more: requests still in flight when wrk stopped counting).
 */
final class WrkHttpLoad implements AutoCloseable {
    static final String BINARY = "wrk";
    /** As the goal states it (issue 12: "{@code wrk -c32} on the same machine"). */
    static final int CONNECTIONS = 32;
    static final int THREADS = 2;
    /** wrk's per-request timeout (its default, 2 s, is shorter than a loaded 2-core machine's worst stall) */
    static final int TIMEOUT_SECONDS = 10;
    private static final String TOPIC = "http";
    private static final int PARTITIONS = 2;
    private static final String BODY = "{\"id\":1,\"name\":\"n1\",\"value\":3}";

    /** One wrk run: requests completed, seconds, latencies in ms as wrk prints them. */
    record Result(long requests, double seconds, double requestsPerSec, double avgMs, double p50Ms, double p99Ms) {
    }

    private final Broker broker;
    private final HttpApiServer server;
    private final Path script;
    private long journaled;

    WrkHttpLoad(Path dir) throws IOException {
        this.broker = Broker.open(BrokerConfig.builder(dir.resolve("broker")).build());
        broker.createTopic(TopicConfig.of(TOPIC, PARTITIONS));
        this.server = new HttpApiServer(HttpApiConfig.builder().bindAddress("127.0.0.1").port(0).build(), broker);
        this.script = dir.resolve("post-one-event.lua");
        Files.writeString(script, "wrk.method = \"POST\"\n"
                + "wrk.body = '" + BODY + "'\n"
                + "wrk.headers[\"Content-Type\"] = \"application/x-ndjson\"\n", StandardCharsets.UTF_8);
    }

    /** True when {@code wrk} is on the PATH. */
    static boolean available() {
        try {
            Process p = new ProcessBuilder(BINARY, "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            p.waitFor(10, TimeUnit.SECONDS);
            return true;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    static String command(int seconds) {
        return BINARY + " -t" + THREADS + " -c" + CONNECTIONS + " -d" + seconds + "s --timeout " + TIMEOUT_SECONDS + "s --latency -s post-one-event.lua "
                + "'http://127.0.0.1:PORT/v1/topics/" + TOPIC + "/events?acks=journal'";
    }

    /**
     * @param checked false for a warm-up: the first requests of a fresh JVM can take seconds (JIT, first journal
     *                files), so a warm-up's client-side timeouts are not held against the server; its figures are dropped
     */
    Result run(int seconds, boolean checked) throws IOException, InterruptedException {
        List<String> cmd = List.of(BINARY, "-t" + THREADS, "-c" + CONNECTIONS, "-d" + seconds + "s",
                "--timeout", TIMEOUT_SECONDS + "s", "--latency",
                "-s", script.toString(), "http://127.0.0.1:" + server.port() + "/v1/topics/" + TOPIC + "/events?acks=journal");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(seconds + 60L, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("wrk did not finish within " + (seconds + 60) + " s");
        }
        if (p.exitValue() != 0) {
            throw new IllegalStateException("wrk exited with " + p.exitValue() + ":\n" + out);
        }
        long end = 0;
        for (int i = 0; i < PARTITIONS; i++) {
            end += broker.endOffset(new TopicPartition(TOPIC, i));
        }
        long written = end - journaled;
        journaled = end;
        if (!checked) {
            if (out.contains("Non-2xx")) {
                throw new IllegalStateException("wrk saw non-2xx answers in the warm-up:\n" + out);
            }
            return null;
        }
        Result r = parse(out);
        // every answered request is in the journal; requests wrk sent but stopped counting (in flight at the end of
        // its run) may be journaled as well, so the journal may hold more than wrk counted, never fewer
        if (written < r.requests()) {
            throw new IllegalStateException("wrk completed " + r.requests() + " requests but the journal grew by only " + written);
        }
        return r;
    }

    private static final Pattern REQUESTS = Pattern.compile("(\\d+) requests in ([\\d.]+)(us|ms|s|m)");
    private static final Pattern LATENCY = Pattern.compile("^\\s*Latency\\s+([\\d.]+)(us|ms|s)\\b", Pattern.MULTILINE);
    private static final Pattern P50 = Pattern.compile("^\\s*50%\\s+([\\d.]+)(us|ms|s)\\b", Pattern.MULTILINE);
    private static final Pattern P99 = Pattern.compile("^\\s*99%\\s+([\\d.]+)(us|ms|s)\\b", Pattern.MULTILINE);

    /** Parses wrk's report; refuses one with socket errors or non-2xx answers. */
    static Result parse(String out) {
        if (out.contains("Socket errors") || out.contains("Non-2xx")) {
            throw new IllegalStateException("wrk saw failed requests:\n" + out);
        }
        Matcher m = REQUESTS.matcher(out);
        if (!m.find()) {
            throw new IllegalStateException("cannot read wrk's report:\n" + out);
        }
        long requests = Long.parseLong(m.group(1));
        double seconds = millis(m.group(2), m.group(3)) / 1e3;
        return new Result(requests, seconds, requests / seconds, millis(LATENCY, out), millis(P50, out), millis(P99, out));
    }

    private static double millis(Pattern p, String out) {
        Matcher m = p.matcher(out);
        if (!m.find()) {
            throw new IllegalStateException("cannot read " + p.pattern() + " in wrk's report:\n" + out);
        }
        return millis(m.group(1), m.group(2));
    }

    private static double millis(String value, String unit) {
        double v = Double.parseDouble(value);
        return switch (unit) {
            case "us" -> v / 1e3;
            case "ms" -> v;
            case "s" -> v * 1e3;
            case "m" -> v * 60e3;
            default -> throw new IllegalArgumentException("unit " + unit);
        };
    }

    static List<Double> field(List<Result> runs, java.util.function.ToDoubleFunction<Result> f) {
        List<Double> out = new ArrayList<>();
        runs.forEach(r -> out.add(f.applyAsDouble(r)));
        return out;
    }

    @Override
    public void close() {
        server.close();
        broker.close();
    }
}
