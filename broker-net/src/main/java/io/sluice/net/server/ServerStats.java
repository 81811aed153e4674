package io.sluice.net.server;

/**
 * A snapshot of the binary server's counters since it started (for {@code /metrics} and tests).
 *
 * @param activeConnections   connections open now
 * @param acceptedConnections connections accepted in total
 * @param refusedConnections  connections closed at once because {@code maxConnections} was reached
 * @param requests            requests started
 * @param errorResponses      requests answered with an error code
 * @param protocolErrors      connections closed because their byte stream broke framing (bad length, oversized frame)
 * @param producedRecords     records acknowledged to producers
 * @param fetchedRecords      records sent to fetchers
 * @param backPressurePauses  times a connection stopped being read because the partition ring was full
 */
public record ServerStats(long activeConnections, long acceptedConnections, long refusedConnections, long requests,
                          long errorResponses, long protocolErrors, long producedRecords, long fetchedRecords,
                          long backPressurePauses) {

    /** The counters as named gauges (for the HTTP port's {@code GET /metrics}). */
    public java.util.Map<String, Number> asGauges() {
        java.util.Map<String, Number> g = new java.util.LinkedHashMap<>();
        g.put("sluice_binary_connections_active", activeConnections);
        g.put("sluice_binary_connections_accepted_total", acceptedConnections);
        g.put("sluice_binary_connections_refused_total", refusedConnections);
        g.put("sluice_binary_requests_total", requests);
        g.put("sluice_binary_error_responses_total", errorResponses);
        g.put("sluice_binary_protocol_errors_total", protocolErrors);
        g.put("sluice_binary_produced_records_total", producedRecords);
        g.put("sluice_binary_fetched_records_total", fetchedRecords);
        g.put("sluice_binary_back_pressure_pauses_total", backPressurePauses);
        return g;
    }
}
