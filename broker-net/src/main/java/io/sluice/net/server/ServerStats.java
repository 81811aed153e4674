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
 * @param unauthenticatedConnections connections open now that have not authenticated (0 without a token)
 * @param unauthenticatedCloses      connections closed before authenticating: a frame over
 *                                   {@code authMaxFrameBytes}, an API other than API_VERSIONS/AUTHENTICATE, a wrong
 *                                   token, or {@code authTimeoutMillis} passed
 * @param unauthenticatedRefused     connections closed at once because {@code maxUnauthenticatedConnections} were open
 * @param internalErrors             requests answered {@code UNKNOWN} because their operation failed unexpectedly
 */
public record ServerStats(long activeConnections, long acceptedConnections, long refusedConnections, long requests,
                          long errorResponses, long protocolErrors, long producedRecords, long fetchedRecords,
                          long backPressurePauses, long unauthenticatedConnections, long unauthenticatedCloses,
                          long unauthenticatedRefused, long internalErrors) {

    /** The counters as named gauges, for {@code GET /metrics} under the component name {@code binary} (sluice_binary_...). */
    public java.util.Map<String, Number> asGauges() {
        java.util.Map<String, Number> g = new java.util.LinkedHashMap<>();
        g.put("connections_active", activeConnections);
        g.put("connections_accepted_total", acceptedConnections);
        g.put("connections_refused_total", refusedConnections);
        g.put("requests_total", requests);
        g.put("error_responses_total", errorResponses);
        g.put("protocol_errors_total", protocolErrors);
        g.put("produced_records_total", producedRecords);
        g.put("fetched_records_total", fetchedRecords);
        g.put("back_pressure_pauses_total", backPressurePauses);
        g.put("unauthenticated_connections", unauthenticatedConnections);
        g.put("unauthenticated_closes_total", unauthenticatedCloses);
        g.put("unauthenticated_refused_total", unauthenticatedRefused);
        g.put("internal_errors_total", internalErrors);
        return g;
    }
}
