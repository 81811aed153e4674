package io.sluice.net.http.internal;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of the HTTP listener. Written by the I/O threads (LongAdder: no contended CAS on the hot path), read by
 * {@code GET /metrics}.
 */
public final class HttpMetrics {
    public final AtomicInteger openConnections = new AtomicInteger();
    public final LongAdder connectionsAccepted = new LongAdder();
    public final LongAdder connectionsRejected = new LongAdder();
    public final LongAdder idleTimeouts = new LongAdder();
    public final LongAdder requestTimeouts = new LongAdder();
    public final LongAdder authFailures = new LongAdder();
    /** Connections open that have not sent a request with a valid token yet (only counted when a token is set). */
    public final AtomicInteger unauthenticatedConnections = new AtomicInteger();
    public final LongAdder unauthenticatedRejected = new LongAdder();
    public final LongAdder headerTimeouts = new LongAdder();
    public final LongAdder eventsAccepted = new LongAdder();
    public final LongAdder bodyBytes = new LongAdder();
    public final LongAdder backPressured = new LongAdder();

    /** key: route + ' ' + status; a handful of keys, created once each. */
    private final Map<String, LongAdder> requests = new ConcurrentHashMap<>();

    public void request(String route, int status) {
        requests.computeIfAbsent(route + ' ' + status, k -> new LongAdder()).increment();
    }

    /** route → status → count, sorted. */
    public Map<String, Map<Integer, Long>> requests() {
        Map<String, Map<Integer, Long>> out = new TreeMap<>();
        requests.forEach((key, count) -> {
            int space = key.indexOf(' ');
            out.computeIfAbsent(key.substring(0, space), r -> new TreeMap<>())
                    .put(Integer.parseInt(key.substring(space + 1)), count.sum());
        });
        return out;
    }
}
