package io.sluice.net.server;

import io.netty.handler.ssl.SslContext;
import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.core.config.ConfigDef;
import io.sluice.core.config.ConfigDef.Computed;
import io.sluice.core.config.ConfigDef.Importance;
import io.sluice.core.config.ConfigDef.Type;
import io.sluice.core.config.Validator;
import io.sluice.net.protocol.Frames;

/**
 * The binary-protocol server's settings, validated once by {@link Builder#build()} (each error names the setting
 * and the value).
 *
 * @param bindAddress              interface to listen on (default {@code 127.0.0.1}; {@code 0.0.0.0} is an explicit
 *                                 choice and logs a warning when no auth token is set)
 * @param port                     TCP port (default 7070; 0 picks a free port, see {@link BrokerServer#port()})
 * @param maxFrameSize             largest request frame accepted, in bytes (default 16 MiB); a longer frame closes
 *                                 the connection. Must exceed the core's max event size plus batch framing
 * @param maxInFlightPerConnection requests a connection may have started but not yet answered (default 256); at the
 *                                 bound the server stops reading that connection
 * @param maxConnections           open connections (default 10,000); further connections are closed at once
 * @param idleTimeoutMillis        a connection with no read or write for this long is closed (default 10 min; 0 never)
 * @param frameTimeoutMillis       a frame must arrive completely within this long once its first bytes did (default
 *                                 30 s), so slow-drip clients cannot hold partial-frame buffers open
 * @param maxFetchWaitMillis       cap on a fetch's long-poll wait (default 30 s)
 * @param maxFetchBytes            cap on the bytes one fetch response carries, whatever the client asks for (default
 *                                 1 MiB, as Kafka's max.partition.fetch.bytes), so memory held for a connection that stops reading stays within
 *                                 maxInFlightPerConnection × maxFetchBytes
 * @param ioThreads                event-loop threads (default: half the available processors, at least 1)
 * @param preferNativeTransport    use epoll when available (default true)
 * @param shutdownTimeoutMillis    how long {@link BrokerServer#close()} waits for in-flight requests (default 10 s)
 * @param authToken                shared secret every connection must present with AUTHENTICATE, or null for none
 *                                 (16-4096 characters without whitespace, as for HTTP). Never logged
 * @param sslContext               server TLS context, or null for plaintext
 * @param authMaxFrameBytes        with a token: largest frame a connection may send before it authenticated (default
 *                                 8 KiB, room for a 4096-character token; never more than maxFrameSize); a longer
 *                                 one closes the connection as
 *                                 soon as its length field arrives, so an unauthenticated peer never makes the
 *                                 server buffer more than this (plus one socket read)
 * @param authTimeoutMillis        with a token: a connection that has not authenticated this long after it opened is
 *                                 closed (default 10 s)
 * @param maxUnauthenticatedConnections with a token: connections open and not yet authenticated (default 128); a
 *                                 further one is closed at once. With {@code authMaxFrameBytes} this bounds what
 *                                 clients without the token can make the server hold
 * @param readerIdleMillis         a connection closes its reader of a partition it has not fetched for this long
 *                                 (default 60 s): a consumer whose assignment moved must not keep the journal files
 *                                 that reader mapped (disk space after retention, page cache) until it disconnects
 */
public record BrokerServerConfig(String bindAddress, int port, int maxFrameSize, int maxInFlightPerConnection,
                                 int maxConnections, long idleTimeoutMillis, long frameTimeoutMillis, int maxFetchWaitMillis, int maxFetchBytes, int ioThreads,
                                 boolean preferNativeTransport, long shutdownTimeoutMillis, String authToken,
                                 SslContext sslContext, int authMaxFrameBytes, long authTimeoutMillis,
                                 int maxUnauthenticatedConnections, long readerIdleMillis) {

    public static final int MAX_FRAME_SIZE_LIMIT = 256 << 20;

    public static final String BIND = "bind";
    public static final String PORT = "port";
    public static final String IO_THREADS = "io.threads";
    public static final String MAX_FRAME_SIZE = "max.frame.size";
    public static final String MAX_INFLIGHT_PER_CONNECTION = "max.inflight.per.connection";
    public static final String MAX_CONNECTIONS = "max.connections";
    public static final String IDLE_TIMEOUT_MS = "idle.timeout.ms";
    public static final String FRAME_TIMEOUT_MS = "frame.timeout.ms";
    public static final String MAX_FETCH_WAIT_MS = "max.fetch.wait.ms";
    public static final String MAX_FETCH_BYTES = "max.fetch.bytes";
    public static final String PREFER_NATIVE_TRANSPORT = "prefer.native.transport";
    public static final String SHUTDOWN_TIMEOUT_MS = "shutdown.timeout.ms";
    public static final String AUTH_MAX_FRAME_BYTES = "auth.max.frame.bytes";
    public static final String AUTH_TIMEOUT_MS = "auth.timeout.ms";
    public static final String MAX_UNAUTHENTICATED_CONNECTIONS = "max.unauthenticated.connections";
    public static final String READER_IDLE_MS = "reader.idle.ms";

    /**
     * The binary listener's settings as the broker's properties file names them; the builder's defaults come from
     * here. The auth token and TLS are the application's to read (files, environment) and pass to the builder.
     */
    public static final ConfigDef DEFINITION = new ConfigDef()
            .define(BIND, Type.STRING, "127.0.0.1", Validator.nonBlank(), Importance.HIGH,
                    "interface for the binary and HTTP ports; 0.0.0.0 exposes the broker (a warning is logged when no auth token is set)")
            .define(PORT, Type.INT, 7070, Validator.between(0, 65_535), Importance.HIGH,
                    "binary protocol port (0 picks a free port)")
            .define(IO_THREADS, Type.INT, new Computed("half the available processors, at least 1",
                            () -> Math.max(1, Runtime.getRuntime().availableProcessors() / 2)),
                    Validator.atLeast(1), Importance.LOW, "event-loop threads of the binary port (and of the Kafka listener); "
                            + "the other half is left to the journal threads and the clients: one loop serving many "
                            + "connections picks up several requests per wake-up, and loops that share a partition hand "
                            + "each other's answers across threads")
            .define(MAX_FRAME_SIZE, Type.INT, Frames.DEFAULT_MAX_FRAME_SIZE, Validator.between(1024, MAX_FRAME_SIZE_LIMIT),
                    Importance.MEDIUM, "largest request frame in bytes; a longer frame closes the connection. Must exceed "
                            + "max.event.size plus batch framing")
            .define(MAX_INFLIGHT_PER_CONNECTION, Type.INT, 256, Validator.between(1, 65_536), Importance.MEDIUM,
                    "requests a connection may have started but not yet answered; at the bound the server stops reading that connection")
            .define(MAX_CONNECTIONS, Type.INT, 10_000, Validator.atLeast(1), Importance.MEDIUM,
                    "open connections; further connections are closed at once")
            .define(IDLE_TIMEOUT_MS, Type.LONG, 600_000L, Validator.atLeast(0), Importance.LOW,
                    "a connection with no read or write for this long is closed (0 never)")
            .define(FRAME_TIMEOUT_MS, Type.LONG, 30_000L, Validator.atLeast(1), Importance.LOW,
                    "a frame must arrive completely within this long once its first bytes did (bounds slow-drip clients)")
            .define(MAX_FETCH_WAIT_MS, Type.INT, 30_000, Validator.atLeast(0), Importance.LOW,
                    "cap on a fetch's long-poll wait")
            .define(MAX_FETCH_BYTES, Type.INT, 1 << 20, Validator.atLeast(1024), Importance.MEDIUM,
                    "cap on the bytes one fetch response carries, whatever the client asks for (beyond it only the "
                            + "first whole record batch of a partition, as Kafka does); memory held for a connection "
                            + "that stops reading stays within max.inflight.per.connection × (max.fetch.bytes + one "
                            + "batch per partition fetched)")
            .define(PREFER_NATIVE_TRANSPORT, Type.BOOLEAN, true, Importance.LOW, "use epoll when available")
            .define(SHUTDOWN_TIMEOUT_MS, Type.LONG, 10_000L, Validator.atLeast(0), Importance.LOW,
                    "how long shutdown waits for in-flight requests")
            .define(AUTH_MAX_FRAME_BYTES, Type.INT, 8192, Validator.atLeast(64), Importance.MEDIUM,
                    "with a token: largest frame a connection may send before it authenticated (room for a 4096-character "
                            + "token; never more than max.frame.size); a longer one closes the connection")
            .define(AUTH_TIMEOUT_MS, Type.LONG, 10_000L, Validator.atLeast(1), Importance.LOW,
                    "with a token: a connection not authenticated this long after it opened is closed")
            .define(MAX_UNAUTHENTICATED_CONNECTIONS, Type.INT, 128, Validator.atLeast(1), Importance.MEDIUM,
                    "with a token: connections open and not yet authenticated; a further one is closed at once")
            .define(READER_IDLE_MS, Type.LONG, 60_000L, Validator.atLeast(1), Importance.LOW,
                    "a connection closes its reader of a partition it has not fetched for this long, so a consumer "
                            + "whose assignment moved does not keep old journal files mapped");

    public static final String DEFAULT_BIND_ADDRESS = DEFINITION.defaultString(BIND);
    public static final int DEFAULT_PORT = DEFINITION.defaultInt(PORT);
    /** Largest frame a connection may send before it authenticated (room for a 4096-character token). */
    public static final int DEFAULT_AUTH_MAX_FRAME_BYTES = DEFINITION.defaultInt(AUTH_MAX_FRAME_BYTES);
    public static final long DEFAULT_AUTH_TIMEOUT_MILLIS = DEFINITION.defaultLong(AUTH_TIMEOUT_MS);
    public static final int DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS = DEFINITION.defaultInt(MAX_UNAUTHENTICATED_CONNECTIONS);

    public BrokerServerConfig {
        if (bindAddress == null || bindAddress.isBlank()) {
            throw InvalidConfigException.of("bindAddress", bindAddress, "must be set");
        }
        DEFINITION.check(PORT, "port", port);
        DEFINITION.check(MAX_FRAME_SIZE, "maxFrameSize", maxFrameSize);
        DEFINITION.check(MAX_INFLIGHT_PER_CONNECTION, "maxInFlightPerConnection", maxInFlightPerConnection);
        DEFINITION.check(MAX_CONNECTIONS, "maxConnections", maxConnections);
        DEFINITION.check(IDLE_TIMEOUT_MS, "idleTimeoutMillis", idleTimeoutMillis);
        DEFINITION.check(FRAME_TIMEOUT_MS, "frameTimeoutMillis", frameTimeoutMillis);
        DEFINITION.check(MAX_FETCH_WAIT_MS, "maxFetchWaitMillis", maxFetchWaitMillis);
        DEFINITION.check(MAX_FETCH_BYTES, "maxFetchBytes", maxFetchBytes);
        DEFINITION.check(IO_THREADS, "ioThreads", ioThreads);
        DEFINITION.check(SHUTDOWN_TIMEOUT_MS, "shutdownTimeoutMillis", shutdownTimeoutMillis);
        if (authToken != null) {
            io.sluice.net.security.TokenAuthenticator.of(authToken); // 16-4096 characters, no whitespace; never echoed
        }
        DEFINITION.check(AUTH_MAX_FRAME_BYTES, "authMaxFrameBytes", authMaxFrameBytes);
        if (authToken != null) {
            // an AUTHENTICATE frame: 8-byte request header + int16 length + the token's UTF-8 bytes
            int needed = Frames.REQUEST_HEADER_SIZE + 2 + authToken.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
            if (Math.min(authMaxFrameBytes, maxFrameSize) < needed) {
                throw InvalidConfigException.of("authMaxFrameBytes", authMaxFrameBytes,
                        "must be at least " + needed + " bytes to carry the configured token in an AUTHENTICATE frame");
            }
        }
        DEFINITION.check(AUTH_TIMEOUT_MS, "authTimeoutMillis", authTimeoutMillis);
        DEFINITION.check(MAX_UNAUTHENTICATED_CONNECTIONS, "maxUnauthenticatedConnections", maxUnauthenticatedConnections);
        DEFINITION.check(READER_IDLE_MS, "readerIdleMillis", readerIdleMillis);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding {@code settings} (parsed by {@link #DEFINITION}); token and TLS are left to the caller. */
    public static Builder builder(ConfigDef.Values settings) {
        return new Builder()
                .bindAddress(settings.getString(BIND))
                .port(settings.getInt(PORT))
                .ioThreads(settings.getInt(IO_THREADS))
                .maxFrameSize(settings.getInt(MAX_FRAME_SIZE))
                .maxInFlightPerConnection(settings.getInt(MAX_INFLIGHT_PER_CONNECTION))
                .maxConnections(settings.getInt(MAX_CONNECTIONS))
                .idleTimeoutMillis(settings.getLong(IDLE_TIMEOUT_MS))
                .frameTimeoutMillis(settings.getLong(FRAME_TIMEOUT_MS))
                .maxFetchWaitMillis(settings.getInt(MAX_FETCH_WAIT_MS))
                .maxFetchBytes(settings.getInt(MAX_FETCH_BYTES))
                .preferNativeTransport(settings.getBoolean(PREFER_NATIVE_TRANSPORT))
                .shutdownTimeoutMillis(settings.getLong(SHUTDOWN_TIMEOUT_MS))
                .authMaxFrameBytes(settings.getInt(AUTH_MAX_FRAME_BYTES))
                .authTimeoutMillis(settings.getLong(AUTH_TIMEOUT_MS))
                .maxUnauthenticatedConnections(settings.getInt(MAX_UNAUTHENTICATED_CONNECTIONS))
                .readerIdleMillis(settings.getLong(READER_IDLE_MS));
    }

    /** The frame limit before authentication: {@code min(authMaxFrameBytes, maxFrameSize)}. */
    public int preAuthFrameLimit() {
        return Math.min(authMaxFrameBytes, maxFrameSize);
    }

    /** Never prints the token. */
    @Override
    public String toString() {
        return "BrokerServerConfig[bind=" + bindAddress + ":" + port + ", maxFrameSize=" + maxFrameSize
                + ", maxInFlightPerConnection=" + maxInFlightPerConnection + ", maxConnections=" + maxConnections
                + ", idleTimeoutMillis=" + idleTimeoutMillis + ", ioThreads=" + ioThreads
                + ", auth=" + (authToken != null ? "token (authMaxFrameBytes=" + authMaxFrameBytes + ", authTimeoutMillis="
                + authTimeoutMillis + ", maxUnauthenticatedConnections=" + maxUnauthenticatedConnections + ")" : "off")
                + ", tls=" + (sslContext != null) + "]";
    }

    public static final class Builder {
        private String bindAddress = DEFAULT_BIND_ADDRESS;
        private int port = DEFAULT_PORT;
        private int maxFrameSize = DEFINITION.defaultInt(MAX_FRAME_SIZE);
        private int maxInFlightPerConnection = DEFINITION.defaultInt(MAX_INFLIGHT_PER_CONNECTION);
        private int maxConnections = DEFINITION.defaultInt(MAX_CONNECTIONS);
        private long idleTimeoutMillis = DEFINITION.defaultLong(IDLE_TIMEOUT_MS);
        private long frameTimeoutMillis = DEFINITION.defaultLong(FRAME_TIMEOUT_MS);
        private int maxFetchWaitMillis = DEFINITION.defaultInt(MAX_FETCH_WAIT_MS);
        private int maxFetchBytes = DEFINITION.defaultInt(MAX_FETCH_BYTES);
        private int ioThreads = DEFINITION.defaultInt(IO_THREADS);
        private boolean preferNativeTransport = (Boolean) DEFINITION.defaultValue(PREFER_NATIVE_TRANSPORT);
        private long shutdownTimeoutMillis = DEFINITION.defaultLong(SHUTDOWN_TIMEOUT_MS);
        private String authToken;
        private SslContext sslContext;
        private int authMaxFrameBytes = DEFAULT_AUTH_MAX_FRAME_BYTES;
        private long authTimeoutMillis = DEFAULT_AUTH_TIMEOUT_MILLIS;
        private int maxUnauthenticatedConnections = DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS;
        private long readerIdleMillis = DEFINITION.defaultLong(READER_IDLE_MS);

        private Builder() {
        }

        public Builder bindAddress(String v) { this.bindAddress = v; return this; }
        public Builder port(int v) { this.port = v; return this; }
        public Builder maxFrameSize(int v) { this.maxFrameSize = v; return this; }
        public Builder maxInFlightPerConnection(int v) { this.maxInFlightPerConnection = v; return this; }
        public Builder maxConnections(int v) { this.maxConnections = v; return this; }
        public Builder idleTimeoutMillis(long v) { this.idleTimeoutMillis = v; return this; }
        public Builder frameTimeoutMillis(long v) { this.frameTimeoutMillis = v; return this; }
        public Builder maxFetchWaitMillis(int v) { this.maxFetchWaitMillis = v; return this; }
        public Builder maxFetchBytes(int v) { this.maxFetchBytes = v; return this; }
        public Builder ioThreads(int v) { this.ioThreads = v; return this; }
        public Builder preferNativeTransport(boolean v) { this.preferNativeTransport = v; return this; }
        public Builder shutdownTimeoutMillis(long v) { this.shutdownTimeoutMillis = v; return this; }
        public Builder authToken(String v) { this.authToken = v; return this; }
        public Builder sslContext(SslContext v) { this.sslContext = v; return this; }
        public Builder authMaxFrameBytes(int v) { this.authMaxFrameBytes = v; return this; }
        public Builder authTimeoutMillis(long v) { this.authTimeoutMillis = v; return this; }
        public Builder maxUnauthenticatedConnections(int v) { this.maxUnauthenticatedConnections = v; return this; }
        public Builder readerIdleMillis(long v) { this.readerIdleMillis = v; return this; }

        public BrokerServerConfig build() {
            return new BrokerServerConfig(bindAddress, port, maxFrameSize, maxInFlightPerConnection, maxConnections,
                    idleTimeoutMillis, frameTimeoutMillis, maxFetchWaitMillis, maxFetchBytes, ioThreads, preferNativeTransport, shutdownTimeoutMillis,
                    authToken, sslContext, authMaxFrameBytes, authTimeoutMillis, maxUnauthenticatedConnections,
                    readerIdleMillis);
        }
    }
}
