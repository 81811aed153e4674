package io.sluice.net.http;

import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.core.config.ConfigDef;
import io.sluice.core.config.ConfigDef.Computed;
import io.sluice.core.config.ConfigDef.Importance;
import io.sluice.core.config.ConfigDef.Type;
import io.sluice.core.config.Validator;
import io.sluice.net.server.BrokerServerConfig;
import io.sluice.net.security.TlsConfig;
import io.sluice.net.security.TokenAuthenticator;

import java.util.Objects;

/**
 * Settings of the {@link HttpApiServer} (the broker's whole HTTP API: produce, topics, health, metrics), validated once by the constructor (every error names the setting and
 * the value). Build with {@link #builder()} or {@link #fromProperties}; every bound below is enforced and reported
 * to the client when hit. In messages and in the broker's {@code --config} file each setting is named by its
 * property key ({@code maxBodyBytes} is {@code http.max.body.bytes}, {@code idleTimeoutMillis} is
 * {@code http.idle.timeout.ms}, and so on).
 *
 * @param bindAddress          address to listen on; loopback by default. Anything else without {@code auth} logs a
 *                             warning (see {@link io.sluice.net.security.BindCheck})
 * @param port                 TCP port, 0 for an ephemeral port (read it back with {@link HttpApiServer#port()})
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
public record HttpApiConfig(String bindAddress, int port, int maxBodyBytes, int maxLineBytes, int maxJsonDepth,
                               int maxConnections, int maxPipelinedRequests, long idleTimeoutMillis,
                               long requestTimeoutMillis, long maxBlockMillis, long ackTimeoutMillis, int ioThreads,
                               TlsConfig tls, TokenAuthenticator auth, int maxUnauthenticatedConnections,
                               long headerTimeoutMillis) {

    public static final String PORT = "http.port";
    public static final String MAX_BODY_BYTES = "http.max.body.bytes";
    public static final String MAX_LINE_BYTES = "http.max.line.bytes";
    public static final String MAX_JSON_DEPTH = "http.max.json.depth";
    public static final String MAX_CONNECTIONS = "http.max.connections";
    public static final String MAX_PIPELINED_REQUESTS = "http.max.pipelined.requests";
    public static final String IDLE_TIMEOUT_MS = "http.idle.timeout.ms";
    public static final String REQUEST_TIMEOUT_MS = "http.request.timeout.ms";
    public static final String MAX_BLOCK_MS = "http.max.block.ms";
    public static final String ACK_TIMEOUT_MS = "http.ack.timeout.ms";
    public static final String IO_THREADS = "http.io.threads";
    public static final String TLS_CERT_FILE = "http.tls.cert.file";
    public static final String TLS_KEY_FILE = "http.tls.key.file";
    public static final String MAX_UNAUTHENTICATED_CONNECTIONS = "http.max.unauthenticated.connections";
    public static final String HEADER_TIMEOUT_MS = "http.header.timeout.ms";

    /** Largest request line plus headers the HTTP codec buffers (the token is checked on them, before any body). */
    public static final int DEFAULT_MAX_HEADER_BYTES = 8192;
    /** The HTTP codec's limits: request line and all headers; longer ones get 414 / 431 and the connection closes. */
    public static final int MAX_INITIAL_LINE_BYTES = 4096;
    public static final int MAX_HEADER_BYTES = DEFAULT_MAX_HEADER_BYTES;

    /** Upper bound of {@code maxBodyBytes}: the body is held in memory while it is validated. */
    public static final int MAX_BODY_BYTES_LIMIT = 256 << 20;

    /**
     * The HTTP API's settings as the broker's properties file names them ({@code http.*}); the builder's defaults
     * come from here. The bind address and the token are shared with the binary port and given by the caller.
     */
    public static final ConfigDef DEFINITION = new ConfigDef()
            .define(PORT, Type.INT, 8080, Validator.between(0, 65_535), Importance.HIGH,
                    "HTTP API port (`sluice broker`: 0 disables HTTP; embedded: 0 picks a free port)")
            .define(MAX_BODY_BYTES, Type.INT, 16 << 20, Validator.between(1024, MAX_BODY_BYTES_LIMIT), Importance.MEDIUM,
                    "largest request body; larger ones get 413 and the connection is closed")
            .define(MAX_LINE_BYTES, Type.INT, 1 << 20, Validator.atLeast(16), Importance.MEDIUM,
                    "largest NDJSON line (one event) in bytes, without its terminator; at most http.max.body.bytes")
            .define(MAX_JSON_DEPTH, Type.INT, 64, Validator.between(1, 1000), Importance.LOW,
                    "deepest nesting of arrays/objects accepted in an event")
            .define(MAX_CONNECTIONS, Type.INT, 1024, Validator.atLeast(1), Importance.MEDIUM,
                    "concurrent connections; further ones get 503 and are closed")
            .define(MAX_PIPELINED_REQUESTS, Type.INT, 64, Validator.atLeast(1), Importance.LOW,
                    "requests a client may send before reading the responses; beyond that the connection is closed")
            .define(IDLE_TIMEOUT_MS, Type.LONG, 60_000L, Validator.atLeast(1), Importance.LOW,
                    "a connection with no request in progress is closed after this long without a byte")
            .define(REQUEST_TIMEOUT_MS, Type.LONG, 30_000L, Validator.atLeast(1), Importance.LOW,
                    "a request (headers and body) must arrive within this long of its first byte, otherwise 408 and close")
            .define(MAX_BLOCK_MS, Type.LONG, 1_000L, Validator.atLeast(0), Importance.MEDIUM,
                    "how long a produce request waits for room in a full partition ring before 503 with Retry-After")
            .define(ACK_TIMEOUT_MS, Type.LONG, 30_000L, Validator.atLeast(1), Importance.LOW,
                    "how long a produce request waits for its acknowledgements before 504 (the events may still be written)")
            .define(IO_THREADS, Type.INT, new Computed("min(4, available processors)",
                            () -> Math.min(4, Runtime.getRuntime().availableProcessors())),
                    Validator.between(1, 256), Importance.LOW, "Netty event-loop threads serving HTTP connections")
            .define(TLS_CERT_FILE, Type.STRING, null, Importance.MEDIUM,
                    "PEM certificate chain: HTTPS on the HTTP port (with http.tls.key.file)")
            .define(TLS_KEY_FILE, Type.STRING, null, Importance.MEDIUM, "PEM PKCS#8 private key of http.tls.cert.file")
            .define(MAX_UNAUTHENTICATED_CONNECTIONS, Type.INT, 128, Validator.atLeast(1), Importance.MEDIUM,
                    "with a token: connections that have not yet sent a request with a valid token; further ones get 503 and are closed")
            .define(HEADER_TIMEOUT_MS, Type.LONG, 10_000L, Validator.atLeast(1), Importance.LOW,
                    "a request's line and headers must arrive within this long of its first byte (408 and close); with a "
                            + "token, an unauthenticated connection is also closed after this long without a request");

    public static final String DEFAULT_BIND_ADDRESS = BrokerServerConfig.DEFAULT_BIND_ADDRESS;
    public static final int DEFAULT_PORT = DEFINITION.defaultInt(PORT);
    public static final int DEFAULT_MAX_BODY_BYTES = DEFINITION.defaultInt(MAX_BODY_BYTES);
    public static final int DEFAULT_MAX_LINE_BYTES = DEFINITION.defaultInt(MAX_LINE_BYTES);
    public static final int DEFAULT_MAX_JSON_DEPTH = DEFINITION.defaultInt(MAX_JSON_DEPTH);
    public static final int DEFAULT_MAX_CONNECTIONS = DEFINITION.defaultInt(MAX_CONNECTIONS);
    public static final int DEFAULT_MAX_PIPELINED_REQUESTS = DEFINITION.defaultInt(MAX_PIPELINED_REQUESTS);
    public static final long DEFAULT_IDLE_TIMEOUT_MILLIS = DEFINITION.defaultLong(IDLE_TIMEOUT_MS);
    public static final long DEFAULT_REQUEST_TIMEOUT_MILLIS = DEFINITION.defaultLong(REQUEST_TIMEOUT_MS);
    public static final long DEFAULT_MAX_BLOCK_MILLIS = DEFINITION.defaultLong(MAX_BLOCK_MS);
    public static final long DEFAULT_ACK_TIMEOUT_MILLIS = DEFINITION.defaultLong(ACK_TIMEOUT_MS);
    public static final int DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS = DEFINITION.defaultInt(MAX_UNAUTHENTICATED_CONNECTIONS);
    public static final long DEFAULT_HEADER_TIMEOUT_MILLIS = DEFINITION.defaultLong(HEADER_TIMEOUT_MS);

    public static final HttpApiConfig DEFAULT = builder().build();

    public HttpApiConfig {
        Objects.requireNonNull(bindAddress, "bindAddress");
        if (bindAddress.isBlank()) {
            throw InvalidConfigException.of("bind", "''", "must be an address or host name");
        }
        DEFINITION.check(PORT, PORT, port);
        DEFINITION.check(MAX_BODY_BYTES, MAX_BODY_BYTES, maxBodyBytes);
        DEFINITION.check(MAX_LINE_BYTES, MAX_LINE_BYTES, maxLineBytes);
        if (maxLineBytes > maxBodyBytes) {
            throw InvalidConfigException.of(MAX_LINE_BYTES, maxLineBytes, "must be between 16 and http.max.body.bytes (" + maxBodyBytes + ")");
        }
        DEFINITION.check(MAX_JSON_DEPTH, MAX_JSON_DEPTH, maxJsonDepth);
        DEFINITION.check(MAX_CONNECTIONS, MAX_CONNECTIONS, maxConnections);
        DEFINITION.check(MAX_PIPELINED_REQUESTS, MAX_PIPELINED_REQUESTS, maxPipelinedRequests);
        DEFINITION.check(IDLE_TIMEOUT_MS, IDLE_TIMEOUT_MS, idleTimeoutMillis);
        DEFINITION.check(REQUEST_TIMEOUT_MS, REQUEST_TIMEOUT_MS, requestTimeoutMillis);
        DEFINITION.check(MAX_BLOCK_MS, MAX_BLOCK_MS, maxBlockMillis);
        DEFINITION.check(ACK_TIMEOUT_MS, ACK_TIMEOUT_MS, ackTimeoutMillis);
        DEFINITION.check(IO_THREADS, IO_THREADS, ioThreads);
        DEFINITION.check(MAX_UNAUTHENTICATED_CONNECTIONS, MAX_UNAUTHENTICATED_CONNECTIONS, maxUnauthenticatedConnections);
        DEFINITION.check(HEADER_TIMEOUT_MS, HEADER_TIMEOUT_MS, headerTimeoutMillis);
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * A builder holding the defaults overridden by the {@code http.*} keys of {@code properties} (the broker's
     * {@code --config} file), parsed by {@link #DEFINITION}: a misspelt {@code http.*} key is an error naming the
     * nearest one; other keys are not this component's and are left alone. Bind address and token are left to the
     * caller, which shares them with the binary listener.
     *
     * @throws InvalidConfigException naming the key and value of a setting that does not parse or validate
     */
    public static Builder fromProperties(java.util.Properties properties) {
        java.util.Map<String, String> http = new java.util.LinkedHashMap<>();
        for (String key : properties.stringPropertyNames()) {
            if (key.startsWith("http.")) {
                http.put(key, properties.getProperty(key));
            }
        }
        return builder(DEFINITION.parse(http));
    }

    /** A builder holding {@code settings} (parsed by {@link #DEFINITION}). */
    public static Builder builder(ConfigDef.Values settings) {
        Builder b = builder()
                .port(settings.getInt(PORT))
                .maxBodyBytes(settings.getInt(MAX_BODY_BYTES))
                .maxLineBytes(settings.getInt(MAX_LINE_BYTES))
                .maxJsonDepth(settings.getInt(MAX_JSON_DEPTH))
                .maxConnections(settings.getInt(MAX_CONNECTIONS))
                .maxPipelinedRequests(settings.getInt(MAX_PIPELINED_REQUESTS))
                .idleTimeoutMillis(settings.getLong(IDLE_TIMEOUT_MS))
                .requestTimeoutMillis(settings.getLong(REQUEST_TIMEOUT_MS))
                .maxBlockMillis(settings.getLong(MAX_BLOCK_MS))
                .ackTimeoutMillis(settings.getLong(ACK_TIMEOUT_MS))
                .ioThreads(settings.getInt(IO_THREADS))
                .maxUnauthenticatedConnections(settings.getInt(MAX_UNAUTHENTICATED_CONNECTIONS))
                .headerTimeoutMillis(settings.getLong(HEADER_TIMEOUT_MS));
        String cert = settings.getString(TLS_CERT_FILE);
        String key = settings.getString(TLS_KEY_FILE);
        if (cert != null || key != null) {
            b.tls(new TlsConfig(cert == null ? null : java.nio.file.Path.of(cert), key == null ? null : java.nio.file.Path.of(key), null, null));
        }
        return b;
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
        private int ioThreads = DEFINITION.defaultInt(IO_THREADS);
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

        public HttpApiConfig build() {
            return new HttpApiConfig(bindAddress, port, maxBodyBytes, maxLineBytes, maxJsonDepth, maxConnections,
                    maxPipelinedRequests, idleTimeoutMillis, requestTimeoutMillis, maxBlockMillis, ackTimeoutMillis,
                    ioThreads, tls, auth, maxUnauthenticatedConnections, headerTimeoutMillis);
        }
    }
}
