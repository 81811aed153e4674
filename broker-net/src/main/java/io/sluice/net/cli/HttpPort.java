package io.sluice.net.cli;

import io.sluice.core.Broker;
import io.sluice.net.server.BrokerServer;

import java.io.PrintStream;
import java.util.Properties;

/**
 * Starts the HTTP API next to the binary port. Integration point for {@code io.sluice.net.http.HttpIngestServer}:
 * until that package is part of this build, the broker runs without HTTP and says so.
 */
final class HttpPort {
    private HttpPort() {
    }

    /**
     * @param settings the broker's {@code --config} properties (the HTTP server reads its {@code http.*} keys)
     * @param authToken the shared token of the binary port, also required by HTTP (except {@code /health}), or null
     */
    static AutoCloseable start(Broker broker, BrokerServer server, Properties settings, String bind, int port, String authToken,
                               PrintStream out) {
        if (port == 0) {
            out.println("sluice broker: HTTP disabled (http.port=0)");
            return () -> { };
        }
        out.println("sluice broker: HTTP API not available in this build (io.sluice.net.http is missing)");
        return () -> { };
    }
}
