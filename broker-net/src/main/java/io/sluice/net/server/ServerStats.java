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
}
