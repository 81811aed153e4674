package io.sluice.net.server;

import io.netty.handler.ssl.SslContext;
import io.sluice.core.SluiceException.InvalidConfigException;
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
 * @param ioThreads                event-loop threads (default: available processors)
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
 */
public record BrokerServerConfig(String bindAddress, int port, int maxFrameSize, int maxInFlightPerConnection,
                                 int maxConnections, long idleTimeoutMillis, long frameTimeoutMillis, int maxFetchWaitMillis, int maxFetchBytes, int ioThreads,
                                 boolean preferNativeTransport, long shutdownTimeoutMillis, String authToken,
                                 SslContext sslContext, int authMaxFrameBytes, long authTimeoutMillis,
                                 int maxUnauthenticatedConnections) {

    public static final String DEFAULT_BIND_ADDRESS = "127.0.0.1";
    public static final int DEFAULT_PORT = 7070;
    public static final int MAX_FRAME_SIZE_LIMIT = 256 << 20;
    /** Largest frame a connection may send before it authenticated (room for a 4096-character token). */
    public static final int DEFAULT_AUTH_MAX_FRAME_BYTES = 8192;
    public static final long DEFAULT_AUTH_TIMEOUT_MILLIS = 10_000;
    public static final int DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS = 128;

    public BrokerServerConfig {
        if (bindAddress == null || bindAddress.isBlank()) {
            throw InvalidConfigException.of("bindAddress", bindAddress, "must be set");
        }
        if (port < 0 || port > 65535) {
            throw InvalidConfigException.of("port", port, "must be between 0 and 65535");
        }
        if (maxFrameSize < 1024 || maxFrameSize > MAX_FRAME_SIZE_LIMIT) {
            throw InvalidConfigException.of("maxFrameSize", maxFrameSize, "must be between 1024 and " + MAX_FRAME_SIZE_LIMIT);
        }
        if (maxInFlightPerConnection < 1 || maxInFlightPerConnection > 65_536) {
            throw InvalidConfigException.of("maxInFlightPerConnection", maxInFlightPerConnection, "must be between 1 and 65536");
        }
        if (maxConnections < 1) {
            throw InvalidConfigException.of("maxConnections", maxConnections, "must be >= 1");
        }
        if (idleTimeoutMillis < 0) {
            throw InvalidConfigException.of("idleTimeoutMillis", idleTimeoutMillis, "must be >= 0 (0 disables)");
        }
        if (frameTimeoutMillis < 1) {
            throw InvalidConfigException.of("frameTimeoutMillis", frameTimeoutMillis, "must be >= 1");
        }
        if (maxFetchWaitMillis < 0) {
            throw InvalidConfigException.of("maxFetchWaitMillis", maxFetchWaitMillis, "must be >= 0");
        }
        if (maxFetchBytes < 1024) {
            throw InvalidConfigException.of("maxFetchBytes", maxFetchBytes, "must be >= 1024");
        }
        if (ioThreads < 1) {
            throw InvalidConfigException.of("ioThreads", ioThreads, "must be >= 1");
        }
        if (shutdownTimeoutMillis < 0) {
            throw InvalidConfigException.of("shutdownTimeoutMillis", shutdownTimeoutMillis, "must be >= 0");
        }
        if (authToken != null) {
            io.sluice.net.security.TokenAuthenticator.of(authToken); // 16-4096 characters, no whitespace; never echoed
        }
        if (authMaxFrameBytes < 64) {
            throw InvalidConfigException.of("authMaxFrameBytes", authMaxFrameBytes, "must be >= 64");
        }
        if (authToken != null) {
            // an AUTHENTICATE frame: 8-byte request header + int16 length + the token's UTF-8 bytes
            int needed = Frames.REQUEST_HEADER_SIZE + 2 + authToken.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
            if (Math.min(authMaxFrameBytes, maxFrameSize) < needed) {
                throw InvalidConfigException.of("authMaxFrameBytes", authMaxFrameBytes,
                        "must be at least " + needed + " bytes to carry the configured token in an AUTHENTICATE frame");
            }
        }
        if (authTimeoutMillis < 1) {
            throw InvalidConfigException.of("authTimeoutMillis", authTimeoutMillis, "must be >= 1");
        }
        if (maxUnauthenticatedConnections < 1) {
            throw InvalidConfigException.of("maxUnauthenticatedConnections", maxUnauthenticatedConnections, "must be >= 1");
        }
    }

    public static Builder builder() {
        return new Builder();
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
        private int maxFrameSize = Frames.DEFAULT_MAX_FRAME_SIZE;
        private int maxInFlightPerConnection = 256;
        private int maxConnections = 10_000;
        private long idleTimeoutMillis = 600_000;
        private long frameTimeoutMillis = 30_000;
        private int maxFetchWaitMillis = 30_000;
        private int maxFetchBytes = 1 << 20;
        private int ioThreads = Runtime.getRuntime().availableProcessors();
        private boolean preferNativeTransport = true;
        private long shutdownTimeoutMillis = 10_000;
        private String authToken;
        private SslContext sslContext;
        private int authMaxFrameBytes = DEFAULT_AUTH_MAX_FRAME_BYTES;
        private long authTimeoutMillis = DEFAULT_AUTH_TIMEOUT_MILLIS;
        private int maxUnauthenticatedConnections = DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS;

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

        public BrokerServerConfig build() {
            return new BrokerServerConfig(bindAddress, port, maxFrameSize, maxInFlightPerConnection, maxConnections,
                    idleTimeoutMillis, frameTimeoutMillis, maxFetchWaitMillis, maxFetchBytes, ioThreads, preferNativeTransport, shutdownTimeoutMillis,
                    authToken, sslContext, authMaxFrameBytes, authTimeoutMillis, maxUnauthenticatedConnections);
        }
    }
}
