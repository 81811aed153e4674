package io.sluice.net.http.internal;

import io.sluice.core.BrokerMetrics;
import io.sluice.core.BrokerMetrics.PartitionStats;
import org.HdrHistogram.Histogram;

import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.regex.Pattern;

/**
 * Renders metrics in the Prometheus text exposition format 0.0.4
 * ({@code Content-Type: text/plain; version=0.0.4}). Single-use: one instance per scrape.
 */
public final class PrometheusText {
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
    private static final double[] QUANTILES = {0.5, 0.9, 0.99, 0.999};
    private static final Pattern INVALID_NAME = Pattern.compile("[^A-Za-z0-9_:]");

    private final StringBuilder out = new StringBuilder(4096);

    /** Every metric of the broker, the HTTP listener and the extra gauges. */
    public static String render(BrokerMetrics broker, HttpMetrics http, Map<String, Number> extraGauges) {
        PrometheusText text = new PrometheusText();
        text.broker(broker);
        text.http(http);
        text.extra(extraGauges);
        return text.out.toString();
    }

    private void broker(BrokerMetrics m) {
        List<PartitionStats> ps = m.partitions();
        partitionFamily(ps, "sluice_published_events_total", "counter", "Events put on the partition ring.", PartitionStats::published);
        partitionFamily(ps, "sluice_journaled_events_total", "counter", "Events appended to the journal.", PartitionStats::journaled);
        partitionFamily(ps, "sluice_journaled_bytes_total", "counter", "Bytes appended to the journal.", PartitionStats::journaledBytes);
        partitionFamily(ps, "sluice_back_pressured_total", "counter", "Sends that found the partition ring full (each retry counts).", PartitionStats::backPressured);
        partitionFamily(ps, "sluice_journal_errors_total", "counter", "Failed journal appends (for example disk full).", PartitionStats::journalErrors);
        partitionFamily(ps, "sluice_ring_capacity", "gauge", "Slots of the partition ring.", PartitionStats::ringCapacity);
        partitionFamily(ps, "sluice_ring_occupancy", "gauge", "Ring slots holding events not yet consumed by the slowest handler.", PartitionStats::ringOccupancy);
        partitionFamily(ps, "sluice_journal_lag_events", "gauge", "Events published but not yet journaled (published - journaled).",
                p -> p.published() - p.journaled());
        partitionFamily(ps, "sluice_partition_start_offset", "gauge", "First retained offset of the partition.", PartitionStats::startOffset);
        partitionFamily(ps, "sluice_partition_end_offset", "gauge", "Offset the next event of the partition will get.", PartitionStats::endOffset);
        summary("sluice_publish_to_journal_seconds", "Latency from Producer.send to the journal append.", m.publishToJournal());
        summary("sluice_journal_to_subscriber_seconds", "Latency from the journal append to a live subscriber.", m.journalToSubscriber());
    }

    private void http(HttpMetrics h) {
        family("sluice_http_requests_total", "counter", "HTTP requests answered, by route and status code.");
        h.requests().forEach((route, byStatus) -> byStatus.forEach((status, count) ->
                sample("sluice_http_requests_total", "{route=\"" + route + "\",code=\"" + status + "\"}", count)));
        simple("sluice_http_connections", "gauge", "Open HTTP connections.", h.openConnections.get());
        simple("sluice_http_connections_accepted_total", "counter", "HTTP connections accepted.", h.connectionsAccepted.sum());
        simple("sluice_http_connections_rejected_total", "counter", "HTTP connections refused at http.max.connections.", h.connectionsRejected.sum());
        simple("sluice_http_idle_timeouts_total", "counter", "Connections closed after http.idle.timeout.ms without a request.", h.idleTimeouts.sum());
        simple("sluice_http_request_timeouts_total", "counter", "Requests not received within http.request.timeout.ms (slow clients), answered 408.", h.requestTimeouts.sum());
        simple("sluice_http_auth_failures_total", "counter", "Requests refused for a missing or wrong token.", h.authFailures.sum());
        simple("sluice_http_unauthenticated_connections", "gauge", "Open HTTP connections that have not sent a valid token yet (0 without a token).", h.unauthenticatedConnections.get());
        simple("sluice_http_unauthenticated_rejected_total", "counter", "HTTP connections refused at http.max.unauthenticated.connections.", h.unauthenticatedRejected.sum());
        simple("sluice_http_header_timeouts_total", "counter", "Connections closed because request headers (or, before authenticating, a request) did not arrive within http.header.timeout.ms.", h.headerTimeouts.sum());
        simple("sluice_http_events_total", "counter", "Events acknowledged through POST /v1/topics/{topic}/events.", h.eventsAccepted.sum());
        simple("sluice_http_body_bytes_total", "counter", "Request body bytes received.", h.bodyBytes.sum());
        simple("sluice_http_back_pressured_total", "counter", "Produce requests answered 503 because a partition ring stayed full.", h.backPressured.sum());
    }

    private void extra(Map<String, Number> gauges) {
        if (gauges == null) {
            return;
        }
        // names may carry labels (name{k="v"}); samples of one name share one HELP/TYPE (the map is sorted by name)
        String[] family = {null};
        gauges.forEach((name, value) -> {
            int brace = name.indexOf('{');
            String safe = INVALID_NAME.matcher(brace < 0 ? name : name.substring(0, brace)).replaceAll("_");
            String labels = brace < 0 ? "" : name.substring(brace);
            if (!safe.isEmpty() && !Character.isDigit(safe.charAt(0))) {
                if (!safe.equals(family[0])) {
                    family(safe, "gauge", "Reported by another Sluice component.");
                    family[0] = safe;
                }
                sample(safe, labels, value.doubleValue());
            }
        });
    }

    private void partitionFamily(List<PartitionStats> ps, String name, String type, String help, ToDoubleFunction<PartitionStats> value) {
        family(name, type, help);
        for (PartitionStats p : ps) {
            sample(name, "{topic=\"" + escape(p.topic()) + "\",partition=\"" + p.partition() + "\"}", value.applyAsDouble(p));
        }
    }

    private void summary(String name, String help, Histogram nanos) {
        family(name, "summary", help + " Quantiles from an HdrHistogram since the broker opened; _sum is mean x count.");
        long count = nanos == null ? 0 : nanos.getTotalCount();
        for (double q : QUANTILES) {
            double v = count == 0 ? Double.NaN : nanos.getValueAtPercentile(q * 100) / 1e9;
            sample(name, "{quantile=\"" + q + "\"}", v);
        }
        sample(name + "_sum", "", count == 0 ? 0 : nanos.getMean() * count / 1e9);
        sample(name + "_count", "", count);
        simple(name + "_max", "gauge", "Largest value of " + name + ".", count == 0 ? Double.NaN : nanos.getMaxValue() / 1e9);
    }

    private void simple(String name, String type, String help, double value) {
        family(name, type, help);
        sample(name, "", value);
    }

    private void family(String name, String type, String help) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    private void sample(String name, String labels, double value) {
        out.append(name).append(labels).append(' ');
        if (Double.isNaN(value)) {
            out.append("NaN");
        } else if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            out.append((long) value);
        } else {
            out.append(value);
        }
        out.append('\n');
    }

    /** Label values escape backslash, double quote and newline. */
    static String escape(String labelValue) {
        return labelValue.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
