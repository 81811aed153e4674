package io.sluice.net.http.internal;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
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

    /**
     * route → counters indexed by status code; a handful of routes, each created once. Counting an answer is a map
     * lookup on the route (a constant string, its hash cached) and an array index: nothing is allocated per answer.
     */
    private final Map<String, AtomicReferenceArray<LongAdder>> requests = new ConcurrentHashMap<>();
    /** Status codes have three digits (RFC 9110 section 15). */
    private static final int STATUS_CODES = 1000;

    /** Counts one answer; {@code status} is an HTTP status code (100-599). */
    public void request(String route, int status) {
        AtomicReferenceArray<LongAdder> byStatus = requests.get(route);
        if (byStatus == null) {
            byStatus = requests.computeIfAbsent(route, r -> new AtomicReferenceArray<>(STATUS_CODES));
        }
        LongAdder count = byStatus.get(status);
        if (count == null) {
            byStatus.compareAndSet(status, null, new LongAdder());
            count = byStatus.get(status);
        }
        count.increment();
    }

    /** route → status → count, sorted. */
    public Map<String, Map<Integer, Long>> requests() {
        Map<String, Map<Integer, Long>> out = new TreeMap<>();
        requests.forEach((route, byStatus) -> {
            for (int status = 0; status < STATUS_CODES; status++) {
                LongAdder count = byStatus.get(status);
                if (count != null) {
                    out.computeIfAbsent(route, r -> new TreeMap<>()).put(status, count.sum());
                }
            }
        });
        return out;
    }
}
