package io.sluice.net.http.internal;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

import java.util.ArrayList;
import java.util.List;

/** The HTTP listener's counters ({@link HttpMetrics}) as Prometheus series. */
public final class HttpCollector implements MultiCollector {
    private final HttpMetrics h;

    public HttpCollector(HttpMetrics metrics) {
        this.h = metrics;
    }

    @Override
    public MetricSnapshots collect() {
        List<MetricSnapshot> out = new ArrayList<>();
        CounterSnapshot.Builder requests = CounterSnapshot.builder().name("sluice_http_requests")
                .help("HTTP requests answered, by route and status code.");
        h.requests().forEach((route, byStatus) -> byStatus.forEach((status, count) ->
                requests.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                        .labels(Labels.of("route", route, "code", Integer.toString(status))).value(count).build())));
        out.add(requests.build());
        out.add(GaugeSnapshot.builder().name("sluice_http_connections").help("Open HTTP connections.")
                .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(h.openConnections.get()).build()).build());
        out.add(counter("sluice_http_connections_accepted", "HTTP connections accepted.", h.connectionsAccepted.sum()));
        out.add(counter("sluice_http_connections_rejected", "HTTP connections refused at http.max.connections.", h.connectionsRejected.sum()));
        out.add(counter("sluice_http_idle_timeouts", "Connections closed after http.idle.timeout.ms without a request.", h.idleTimeouts.sum()));
        out.add(counter("sluice_http_request_timeouts", "Requests not received within http.request.timeout.ms (slow clients), answered 408.", h.requestTimeouts.sum()));
        out.add(counter("sluice_http_auth_failures", "Requests refused for a missing or wrong token.", h.authFailures.sum()));
        out.add(GaugeSnapshot.builder().name("sluice_http_unauthenticated_connections")
                .help("Open HTTP connections that have not sent a valid token yet (0 without a token).")
                .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(h.unauthenticatedConnections.get()).build()).build());
        out.add(counter("sluice_http_unauthenticated_rejected", "HTTP connections refused at http.max.unauthenticated.connections.", h.unauthenticatedRejected.sum()));
        out.add(counter("sluice_http_header_timeouts", "Connections closed because request headers (or, before authenticating, a request) did not arrive within http.header.timeout.ms.", h.headerTimeouts.sum()));
        out.add(counter("sluice_http_events", "Events acknowledged through POST /v1/topics/{topic}/events.", h.eventsAccepted.sum()));
        out.add(counter("sluice_http_body_bytes", "Request body bytes received.", h.bodyBytes.sum()));
        out.add(counter("sluice_http_back_pressured", "Produce requests answered 503 because a partition ring stayed full.", h.backPressured.sum()));
        return new MetricSnapshots(out);
    }

    private static CounterSnapshot counter(String name, String help, double value) {
        return CounterSnapshot.builder().name(name).help(help)
                .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().value(value).build()).build();
    }
}
