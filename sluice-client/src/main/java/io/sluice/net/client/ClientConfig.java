package io.sluice.net.client;

import io.netty.handler.ssl.SslContext;
import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.net.internal.HostPort;
import io.sluice.net.protocol.Frames;

import java.net.InetSocketAddress;

/**
 * How a client reaches a broker; shared by {@link RemoteProducer}, {@link RemoteConsumer} and {@link RemoteAdmin}.
 * Validated once by {@link Builder#build()}.
 *
 * @param bootstrap             {@code host:port} of the broker's binary port
 * @param clientId              a readable name, used in thread names and group member ids
 * @param connectTimeoutMillis  bound on establishing (and authenticating) a connection
 * @param requestTimeoutMillis  bound on waiting for one blocking request (metadata, commit, group calls)
 * @param maxFrameSize          largest response frame accepted (must exceed about twice the fetch size)
 * @param authToken             the broker's shared token, or null when it requires none. Never logged
 * @param sslContext            client TLS context, or null for plaintext
 * @param preferNativeTransport epoll when available
 */
public record ClientConfig(String bootstrap, String clientId, long connectTimeoutMillis, long requestTimeoutMillis,
                           int maxFrameSize, String authToken, SslContext sslContext, boolean preferNativeTransport) {

    public ClientConfig {
        try {
            HostPort.parse(bootstrap);
        } catch (IllegalArgumentException e) {
            throw InvalidConfigException.of("bootstrap", bootstrap, "must be HOST:PORT (" + e.getMessage() + ")");
        }
        if (clientId == null || clientId.isBlank()) {
            throw InvalidConfigException.of("clientId", clientId, "must not be blank");
        }
        if (connectTimeoutMillis < 1) {
            throw InvalidConfigException.of("connectTimeoutMillis", connectTimeoutMillis, "must be >= 1");
        }
        if (requestTimeoutMillis < 1) {
            throw InvalidConfigException.of("requestTimeoutMillis", requestTimeoutMillis, "must be >= 1");
        }
        if (maxFrameSize < 1024) {
            throw InvalidConfigException.of("maxFrameSize", maxFrameSize, "must be >= 1024");
        }
    }

    public static ClientConfig of(String bootstrap) {
        return builder(bootstrap).build();
    }

    public static Builder builder(String bootstrap) {
        return new Builder(bootstrap);
    }

    public InetSocketAddress address() {
        return HostPort.parse(bootstrap);
    }

    /** Never prints the token. */
    @Override
    public String toString() {
        return "ClientConfig[bootstrap=" + bootstrap + ", clientId=" + clientId + ", auth=" + (authToken != null ? "token" : "off")
                + ", tls=" + (sslContext != null) + "]";
    }

    public static final class Builder {
        private final String bootstrap;
        private String clientId = "sluice-client";
        private long connectTimeoutMillis = 5_000;
        private long requestTimeoutMillis = 30_000;
        private int maxFrameSize = 4 * Frames.DEFAULT_MAX_FRAME_SIZE;
        private String authToken;
        private SslContext sslContext;
        private boolean preferNativeTransport = true;

        private Builder(String bootstrap) {
            this.bootstrap = bootstrap;
        }

        public Builder clientId(String v) { this.clientId = v; return this; }
        public Builder connectTimeoutMillis(long v) { this.connectTimeoutMillis = v; return this; }
        public Builder requestTimeoutMillis(long v) { this.requestTimeoutMillis = v; return this; }
        public Builder maxFrameSize(int v) { this.maxFrameSize = v; return this; }
        public Builder authToken(String v) { this.authToken = v; return this; }
        public Builder sslContext(SslContext v) { this.sslContext = v; return this; }
        public Builder preferNativeTransport(boolean v) { this.preferNativeTransport = v; return this; }

        public ClientConfig build() {
            return new ClientConfig(bootstrap, clientId, connectTimeoutMillis, requestTimeoutMillis, maxFrameSize,
                    authToken, sslContext, preferNativeTransport);
        }
    }
}
