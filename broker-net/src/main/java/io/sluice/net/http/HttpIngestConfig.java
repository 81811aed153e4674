package io.sluice.net.http;

import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.net.security.TlsConfig;
import io.sluice.net.security.TokenAuthenticator;

import java.util.Objects;

/**
 * Settings of the {@link HttpIngestServer}, validated once by the constructor (every error names the setting and
 * the value). Build with {@link #builder()} or {@link #fromProperties}; every bound below is enforced and reported
 * to the client when hit. In messages and in the broker's {@code --config} file each setting is named by its
 * property key ({@code maxBodyBytes} is {@code http.max.body.bytes}, {@code idleTimeoutMillis} is
 * {@code http.idle.timeout.ms}, and so on).
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
 * @param maxUnauthenticatedConnections with {@code auth}: connections open that have not yet sent a request with a
 *                             valid token; further ones get {@code 503} and are closed. The token is checked on a
 *                             request's headers before its body is read, so such a connection holds at most one
 *                             request head ({@link #MAX_HEADER_BYTES}) plus one socket read
 * @param headerTimeoutMillis  a request's line and headers must arrive within this long of its first byte
 *                             ({@code 408} and close); with {@code auth}, a connection that has not authenticated is
 *                             also closed after this long without a request (instead of {@code idleTimeoutMillis})
 */
public record HttpIngestConfig(String bindAddress, int port, int maxBodyBytes, int maxLineBytes, int maxJsonDepth,
                               int maxConnections, int maxPipelinedRequests, long idleTimeoutMillis,
                               long requestTimeoutMillis, long maxBlockMillis, long ackTimeoutMillis, int ioThreads,
                               TlsConfig tls, TokenAuthenticator auth, int maxUnauthenticatedConnections,
                               long headerTimeoutMillis) {

    public static final String DEFAULT_BIND_ADDRESS = "127.0.0.1";
    public static final int DEFAULT_PORT = 8080;
    public static final int DEFAULT_MAX_BODY_BYTES = 16 << 20;
    public static final int DEFAULT_MAX_LINE_BYTES = 1 << 20;
    public static final int DEFAULT_MAX_JSON_DEPTH = 64;
    public static final int DEFAULT_MAX_CONNECTIONS = 1024;
    /** Largest request line plus headers the HTTP codec buffers (the token is checked on them, before any body). */
    public static final int DEFAULT_MAX_HEADER_BYTES = 8192;
    /** The HTTP codec's limits: request line and all headers; longer ones get 414 / 431 and the connection closes. */
    public static final int MAX_INITIAL_LINE_BYTES = 4096;
    public static final int MAX_HEADER_BYTES = DEFAULT_MAX_HEADER_BYTES;
    public static final int DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS = 128;
    public static final long DEFAULT_HEADER_TIMEOUT_MILLIS = 10_000;
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
            throw InvalidConfigException.of("bind", "''", "must be an address or host name");
        }
        if (port < 0 || port > 65_535) {
            throw InvalidConfigException.of("http.port", port, "must be between 0 and 65535");
        }
        if (maxBodyBytes < 1024 || maxBodyBytes > MAX_BODY_BYTES_LIMIT) {
            throw InvalidConfigException.of("http.max.body.bytes", maxBodyBytes, "must be between 1024 and " + MAX_BODY_BYTES_LIMIT);
        }
        if (maxLineBytes < 16 || maxLineBytes > maxBodyBytes) {
            throw InvalidConfigException.of("http.max.line.bytes", maxLineBytes, "must be between 16 and http.max.body.bytes (" + maxBodyBytes + ")");
        }
        if (maxJsonDepth < 1 || maxJsonDepth > 1000) {
            throw InvalidConfigException.of("http.max.json.depth", maxJsonDepth, "must be between 1 and 1000");
        }
        if (maxConnections < 1) {
            throw InvalidConfigException.of("http.max.connections", maxConnections, "must be >= 1");
        }
        if (maxPipelinedRequests < 1) {
            throw InvalidConfigException.of("http.max.pipelined.requests", maxPipelinedRequests, "must be >= 1");
        }
        if (idleTimeoutMillis < 1) {
            throw InvalidConfigException.of("http.idle.timeout.ms", idleTimeoutMillis, "must be >= 1");
        }
        if (requestTimeoutMillis < 1) {
            throw InvalidConfigException.of("http.request.timeout.ms", requestTimeoutMillis, "must be >= 1");
        }
        if (maxBlockMillis < 0) {
            throw InvalidConfigException.of("http.max.block.ms", maxBlockMillis, "must be >= 0");
        }
        if (ackTimeoutMillis < 1) {
            throw InvalidConfigException.of("http.ack.timeout.ms", ackTimeoutMillis, "must be >= 1");
        }
        if (ioThreads < 1 || ioThreads > 256) {
            throw InvalidConfigException.of("http.io.threads", ioThreads, "must be between 1 and 256");
        }
        if (maxUnauthenticatedConnections < 1) {
            throw InvalidConfigException.of("http.max.unauthenticated.connections", maxUnauthenticatedConnections, "must be >= 1");
        }
        if (headerTimeoutMillis < 1) {
            throw InvalidConfigException.of("http.header.timeout.ms", headerTimeoutMillis, "must be >= 1");
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * A builder holding the defaults overridden by the {@code http.*} keys of {@code properties} (the broker's
     * {@code --config} file): {@code http.max.body.bytes}, {@code http.max.line.bytes}, {@code http.max.json.depth},
     * {@code http.max.connections}, {@code http.max.pipelined.requests}, {@code http.idle.timeout.ms},
     * {@code http.request.timeout.ms}, {@code http.max.block.ms}, {@code http.ack.timeout.ms}, {@code http.io.threads},
     * {@code http.max.unauthenticated.connections}, {@code http.header.timeout.ms},
     * and {@code http.tls.cert.file} with {@code http.tls.key.file} (PEM) for TLS. Bind address, port and token are
     * left to the caller, which shares them with the binary listener.
     *
     * @throws InvalidConfigException naming the key and value of a number that does not parse
     */
    public static Builder fromProperties(java.util.Properties properties) {
        Builder b = builder();
        b.maxBodyBytes = (int) number(properties, "http.max.body.bytes", b.maxBodyBytes);
        b.maxLineBytes = (int) number(properties, "http.max.line.bytes", b.maxLineBytes);
        b.maxJsonDepth = (int) number(properties, "http.max.json.depth", b.maxJsonDepth);
        b.maxConnections = (int) number(properties, "http.max.connections", b.maxConnections);
        b.maxPipelinedRequests = (int) number(properties, "http.max.pipelined.requests", b.maxPipelinedRequests);
        b.idleTimeoutMillis = number(properties, "http.idle.timeout.ms", b.idleTimeoutMillis);
        b.requestTimeoutMillis = number(properties, "http.request.timeout.ms", b.requestTimeoutMillis);
        b.maxBlockMillis = number(properties, "http.max.block.ms", b.maxBlockMillis);
        b.ackTimeoutMillis = number(properties, "http.ack.timeout.ms", b.ackTimeoutMillis);
        b.ioThreads = (int) number(properties, "http.io.threads", b.ioThreads);
        b.maxUnauthenticatedConnections = (int) number(properties, "http.max.unauthenticated.connections", b.maxUnauthenticatedConnections);
        b.headerTimeoutMillis = number(properties, "http.header.timeout.ms", b.headerTimeoutMillis);
        String cert = properties.getProperty("http.tls.cert.file");
        String key = properties.getProperty("http.tls.key.file");
        if (cert != null || key != null) {
            b.tls = new TlsConfig(cert == null ? null : java.nio.file.Path.of(cert.strip()),
                    key == null ? null : java.nio.file.Path.of(key.strip()), null, null);
        }
        return b;
    }

    private static long number(java.util.Properties properties, String key, long absent) {
        String text = properties.getProperty(key);
        if (text == null || text.isBlank()) {
            return absent;
        }
        try {
            long v = Long.parseLong(text.strip().replace("_", ""));
            if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
                throw InvalidConfigException.of(key, text, "is out of range");
            }
            return v;
        } catch (NumberFormatException e) {
            throw InvalidConfigException.of(key, "'" + text + "'", "must be an integer");
        }
    }

    public Builder toBuilder() {
        return new Builder().bindAddress(bindAddress).port(port).maxBodyBytes(maxBodyBytes).maxLineBytes(maxLineBytes)
                .maxJsonDepth(maxJsonDepth).maxConnections(maxConnections).maxPipelinedRequests(maxPipelinedRequests)
                .idleTimeoutMillis(idleTimeoutMillis).requestTimeoutMillis(requestTimeoutMillis)
                .maxBlockMillis(maxBlockMillis).ackTimeoutMillis(ackTimeoutMillis).ioThreads(ioThreads)
                .tls(tls).auth(auth).maxUnauthenticatedConnections(maxUnauthenticatedConnections)
                .headerTimeoutMillis(headerTimeoutMillis);
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
        private int maxUnauthenticatedConnections = DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS;
        private long headerTimeoutMillis = DEFAULT_HEADER_TIMEOUT_MILLIS;

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
        public Builder maxUnauthenticatedConnections(int v) { this.maxUnauthenticatedConnections = v; return this; }
        public Builder headerTimeoutMillis(long v) { this.headerTimeoutMillis = v; return this; }

        public HttpIngestConfig build() {
            return new HttpIngestConfig(bindAddress, port, maxBodyBytes, maxLineBytes, maxJsonDepth, maxConnections,
                    maxPipelinedRequests, idleTimeoutMillis, requestTimeoutMillis, maxBlockMillis, ackTimeoutMillis,
                    ioThreads, tls, auth, maxUnauthenticatedConnections, headerTimeoutMillis);
        }
    }
}
