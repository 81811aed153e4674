package io.sluice.net.http;

import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.net.security.TlsConfig;
import io.sluice.net.security.TokenAuthenticator;

import java.util.Objects;

/**
 * Settings of the {@link HttpIngestServer}, validated once by the constructor (every error names the setting and
 * the value). Build with {@link #builder()}; every bound below is enforced and reported to the client when hit.
 *
 * @param bindAddress          address to listen on; loopback by default. Anything else without {@code auth} logs a
 *                             warning (see {@link io.sluice.net.security.BindCheck})
 * @param port                 TCP port, 0 for an ephemeral port (read it back with {@link HttpIngestServer#port()})
 * @param maxBodyBytes         largest request body; larger ones get {@code 413} and the connection is closed
 * @param maxLineBytes         largest NDJSON line (one event) in bytes, excluding the line terminator
 * @param maxJsonDepth         deepest nesting of arrays/objects accepted in an event
 * @param maxConnections       concurrent connections; further ones get {@code 503} and are closed
 * @param maxPipelinedRequests requests a client may send before reading the responses (HTTP/1.1 pipelining);
 *                             beyond that the connection is closed
 * @param idleTimeoutMillis    a connection with no request in progress is closed after this long without a byte
 * @param requestTimeoutMillis a request (headers and body) must arrive completely within this long of its first
 *                             byte, otherwise {@code 408} and close: bounds slow-drip ("slowloris") clients
 * @param maxBlockMillis       how long a produce request waits for room when a partition ring is full before it
 *                             answers {@code 503} with {@code Retry-After}; 0 answers at once
 * @param ackTimeoutMillis     how long a produce request waits for its acknowledgements before answering
 *                             {@code 504} (the events may still be written)
 * @param ioThreads            Netty event-loop threads serving connections
 * @param tls                  TLS settings, or null for plaintext HTTP
 * @param auth                 shared-token authentication, or null for none; {@code /health} is always open
 */
public record HttpIngestConfig(String bindAddress, int port, int maxBodyBytes, int maxLineBytes, int maxJsonDepth,
                               int maxConnections, int maxPipelinedRequests, long idleTimeoutMillis,
                               long requestTimeoutMillis, long maxBlockMillis, long ackTimeoutMillis, int ioThreads,
                               TlsConfig tls, TokenAuthenticator auth) {

    public static final String DEFAULT_BIND_ADDRESS = "127.0.0.1";
    public static final int DEFAULT_PORT = 8080;
    public static final int DEFAULT_MAX_BODY_BYTES = 16 << 20;
    public static final int DEFAULT_MAX_LINE_BYTES = 1 << 20;
    public static final int DEFAULT_MAX_JSON_DEPTH = 64;
    public static final int DEFAULT_MAX_CONNECTIONS = 1024;
    public static final int DEFAULT_MAX_PIPELINED_REQUESTS = 64;
    public static final long DEFAULT_IDLE_TIMEOUT_MILLIS = 60_000;
    public static final long DEFAULT_REQUEST_TIMEOUT_MILLIS = 30_000;
    public static final long DEFAULT_MAX_BLOCK_MILLIS = 1_000;
    public static final long DEFAULT_ACK_TIMEOUT_MILLIS = 30_000;
    /** Upper bound of {@code maxBodyBytes}: the body is held in memory while it is validated. */
    public static final int MAX_BODY_BYTES_LIMIT = 256 << 20;

    public static final HttpIngestConfig DEFAULT = builder().build();

    public HttpIngestConfig {
        Objects.requireNonNull(bindAddress, "bindAddress");
        if (bindAddress.isBlank()) {
            throw InvalidConfigException.of("http.bind", "''", "must be an address or host name");
        }
        if (port < 0 || port > 65_535) {
            throw InvalidConfigException.of("http.port", port, "must be between 0 and 65535");
        }
        if (maxBodyBytes < 1024 || maxBodyBytes > MAX_BODY_BYTES_LIMIT) {
            throw InvalidConfigException.of("http.maxBodyBytes", maxBodyBytes, "must be between 1024 and " + MAX_BODY_BYTES_LIMIT);
        }
        if (maxLineBytes < 16 || maxLineBytes > maxBodyBytes) {
            throw InvalidConfigException.of("http.maxLineBytes", maxLineBytes, "must be between 16 and http.maxBodyBytes (" + maxBodyBytes + ")");
        }
        if (maxJsonDepth < 1 || maxJsonDepth > 1000) {
            throw InvalidConfigException.of("http.maxJsonDepth", maxJsonDepth, "must be between 1 and 1000");
        }
        if (maxConnections < 1) {
            throw InvalidConfigException.of("http.maxConnections", maxConnections, "must be >= 1");
        }
        if (maxPipelinedRequests < 1) {
            throw InvalidConfigException.of("http.maxPipelinedRequests", maxPipelinedRequests, "must be >= 1");
        }
        if (idleTimeoutMillis < 1) {
            throw InvalidConfigException.of("http.idleTimeoutMillis", idleTimeoutMillis, "must be >= 1");
        }
        if (requestTimeoutMillis < 1) {
            throw InvalidConfigException.of("http.requestTimeoutMillis", requestTimeoutMillis, "must be >= 1");
        }
        if (maxBlockMillis < 0) {
            throw InvalidConfigException.of("http.maxBlockMillis", maxBlockMillis, "must be >= 0");
        }
        if (ackTimeoutMillis < 1) {
            throw InvalidConfigException.of("http.ackTimeoutMillis", ackTimeoutMillis, "must be >= 1");
        }
        if (ioThreads < 1 || ioThreads > 256) {
            throw InvalidConfigException.of("http.ioThreads", ioThreads, "must be between 1 and 256");
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        return new Builder().bindAddress(bindAddress).port(port).maxBodyBytes(maxBodyBytes).maxLineBytes(maxLineBytes)
                .maxJsonDepth(maxJsonDepth).maxConnections(maxConnections).maxPipelinedRequests(maxPipelinedRequests)
                .idleTimeoutMillis(idleTimeoutMillis).requestTimeoutMillis(requestTimeoutMillis)
                .maxBlockMillis(maxBlockMillis).ackTimeoutMillis(ackTimeoutMillis).ioThreads(ioThreads)
                .tls(tls).auth(auth);
    }

    public static final class Builder {
        private String bindAddress = DEFAULT_BIND_ADDRESS;
        private int port = DEFAULT_PORT;
        private int maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
        private int maxLineBytes = DEFAULT_MAX_LINE_BYTES;
        private int maxJsonDepth = DEFAULT_MAX_JSON_DEPTH;
        private int maxConnections = DEFAULT_MAX_CONNECTIONS;
        private int maxPipelinedRequests = DEFAULT_MAX_PIPELINED_REQUESTS;
        private long idleTimeoutMillis = DEFAULT_IDLE_TIMEOUT_MILLIS;
        private long requestTimeoutMillis = DEFAULT_REQUEST_TIMEOUT_MILLIS;
        private long maxBlockMillis = DEFAULT_MAX_BLOCK_MILLIS;
        private long ackTimeoutMillis = DEFAULT_ACK_TIMEOUT_MILLIS;
        private int ioThreads = Math.min(4, Runtime.getRuntime().availableProcessors());
        private TlsConfig tls;
        private TokenAuthenticator auth;

        private Builder() {
        }

        public Builder bindAddress(String v) { this.bindAddress = v; return this; }
        public Builder port(int v) { this.port = v; return this; }
        public Builder maxBodyBytes(int v) { this.maxBodyBytes = v; return this; }
        public Builder maxLineBytes(int v) { this.maxLineBytes = v; return this; }
        public Builder maxJsonDepth(int v) { this.maxJsonDepth = v; return this; }
        public Builder maxConnections(int v) { this.maxConnections = v; return this; }
        public Builder maxPipelinedRequests(int v) { this.maxPipelinedRequests = v; return this; }
        public Builder idleTimeoutMillis(long v) { this.idleTimeoutMillis = v; return this; }
        public Builder requestTimeoutMillis(long v) { this.requestTimeoutMillis = v; return this; }
        public Builder maxBlockMillis(long v) { this.maxBlockMillis = v; return this; }
        public Builder ackTimeoutMillis(long v) { this.ackTimeoutMillis = v; return this; }
        public Builder ioThreads(int v) { this.ioThreads = v; return this; }
        /** TLS, or null for plaintext. */
        public Builder tls(TlsConfig v) { this.tls = v; return this; }
        /** Token authentication, or null for none. */
        public Builder auth(TokenAuthenticator v) { this.auth = v; return this; }

        public HttpIngestConfig build() {
            return new HttpIngestConfig(bindAddress, port, maxBodyBytes, maxLineBytes, maxJsonDepth, maxConnections,
                    maxPipelinedRequests, idleTimeoutMillis, requestTimeoutMillis, maxBlockMillis, ackTimeoutMillis,
                    ioThreads, tls, auth);
        }
    }
}
