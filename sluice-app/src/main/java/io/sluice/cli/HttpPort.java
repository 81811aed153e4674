package io.sluice.cli;

import io.sluice.core.Broker;
import io.sluice.core.SluiceException;
import io.sluice.net.http.HttpApiConfig;
import io.sluice.net.http.HttpApiServer;
import io.sluice.net.metrics.MetricsRegistry;
import io.sluice.net.security.TokenAuthenticator;
import io.sluice.net.server.BrokerServer;

import java.io.PrintStream;

/**
 * Starts the HTTP API ({@link HttpApiServer}) next to the binary port, in the same process and on the same
 * bind address and token; {@code GET /metrics} also shows the series of the binary server ({@code sluice_binary_*})
 * and of the ingest pipelines ({@code sluice_ingest_*{pipeline="<name>"}}).
 */
final class HttpPort {
    private HttpPort() {
    }

    /**
     * @param config    the HTTP API's settings (from the broker's resolved {@code http.*} keys)
     * @param authToken the shared token of the binary port, also required by HTTP (except {@code /health}), or null
     * @return the running server, or a no-op when {@code port} is 0
     */
    static AutoCloseable start(Broker broker, MetricsRegistry gauges, io.sluice.net.http.HealthRegistry health,
                               HttpApiConfig.Builder config, String bind, int port, String authToken, PrintStream out) {
        if (port == 0) {
            out.println("sluice broker: HTTP disabled (http.port=0)");
            return () -> { };
        }
        config.bindAddress(bind).port(port);
        if (authToken != null) {
            config.auth(TokenAuthenticator.of(authToken));
        }
        HttpApiServer http;
        try {
            http = new HttpApiServer(config.build(), broker, gauges, health);
        } catch (SluiceException e) {
            throw new SluiceException(e.code(), "HTTP: " + e.getMessage(), e);
        }
        out.println("sluice broker: HTTP on " + bind + ":" + http.port());
        return http;
    }
}
