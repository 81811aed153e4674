package io.sluice.net.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The connection time bounds and limit, on an {@link EmbeddedChannel} with frozen time (no sleeping). */
class ConnectionGuardTest {
    private static final long IDLE_MS = 5_000;
    private static final long REQUEST_MS = 2_000;

    private final HttpMetrics metrics = new HttpMetrics();
    private final ConnectionGuard guard = new ConnectionGuard(metrics, 2, IDLE_MS, REQUEST_MS);
    private final HoldingHandler api = new HoldingHandler();

    /** Stands in for the API handler: takes complete requests and answers only when the test says so. */
    private final class HoldingHandler extends ChannelInboundHandlerAdapter {
        ChannelHandlerContext ctx;
        int received;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            this.ctx = ctx;
            received++;
            ((FullHttpRequest) msg).release();
            guard.requestReceived(ctx);
        }
    }

    private final MockTicker ticker = Ticker.newMockTicker();

    /** Every channel a test opened: what is left in their queues (answers not read, bytes not decoded) is released after it. */
    private final List<EmbeddedChannel> channels = new ArrayList<>();

    @AfterEach
    void releaseChannels() {
        for (EmbeddedChannel channel : channels) {
            channel.close(); // not finish(): that would rethrow what a test provoked on purpose
            channel.releaseInbound();
            channel.releaseOutbound();
        }
    }

    private EmbeddedChannel open(ConnectionGuard g, ChannelInboundHandlerAdapter last) {
        return opened(EmbeddedChannel.builder().ticker(ticker)
                .handlers(g, new HttpServerCodec(), new BodyAggregator(1024, metrics), last).build());
    }

    private EmbeddedChannel opened(EmbeddedChannel channel) {
        channels.add(channel);
        return channel;
    }

    private void advance(EmbeddedChannel channel, long millis) {
        ticker.advance(millis, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
    }

    private static String written(EmbeddedChannel channel) {
        StringBuilder out = new StringBuilder();
        ByteBuf b;
        while ((b = channel.readOutbound()) != null) {
            out.append(b.toString(StandardCharsets.US_ASCII));
            b.release();
        }
        return out.toString();
    }

    @Test
    void anIdleConnectionIsClosedQuietlyAfterTheIdleTimeout() {
        EmbeddedChannel channel = open(guard, api);
        advance(channel, IDLE_MS - 1);
        assertThat(channel.isActive()).isTrue();
        advance(channel, 1);
        assertThat(channel.isActive()).isFalse();
        assertThat(written(channel)).isEmpty();
        assertThat(metrics.idleTimeouts.sum()).isEqualTo(1);
    }

    @Test
    void aRequestNotCompleteByItsDeadlineGets408AndIsClosedHoweverOftenBytesArrive() {
        EmbeddedChannel channel = open(guard, api);
        String request = "POST /x HTTP/1.1\r\nHost: y\r\nContent-Length: 5\r\n\r\n12345";
        for (int i = 0; i < 10; i++) { // a byte every 190 ms: never idle, but 1.9 s for ten bytes
            channel.writeInbound(Unpooled.copiedBuffer(request.substring(i, i + 1), StandardCharsets.US_ASCII));
            advance(channel, 190);
        }
        assertThat(channel.isActive()).isTrue();
        advance(channel, 100);
        assertThat(channel.isActive()).isFalse();
        assertThat(written(channel)).startsWith("HTTP/1.1 408 Request Timeout\r\n").contains("http.request.timeout.ms");
        assertThat(api.received).isZero();
        assertThat(metrics.requestTimeouts.sum()).isEqualTo(1);
    }

    @Test
    void noTimeoutAppliesWhileARequestIsProcessedAndTheIdleClockRestartsAfterTheAnswer() {
        EmbeddedChannel channel = open(guard, api);
        channel.writeInbound(Unpooled.copiedBuffer("GET /health HTTP/1.1\r\nHost: y\r\n\r\n", StandardCharsets.US_ASCII));
        assertThat(api.received).isEqualTo(1);
        advance(channel, 10 * IDLE_MS);
        assertThat(channel.isActive()).as("waiting for acknowledgements is not idleness").isTrue();

        guard.responseSent(api.ctx, false);
        advance(channel, IDLE_MS - 1);
        assertThat(channel.isActive()).isTrue();
        advance(channel, 1);
        assertThat(channel.isActive()).isFalse();
    }

    @Test
    void connectionsBeyondTheLimitGet503AndAreClosed() {
        EmbeddedChannel first = open(guard, api);
        EmbeddedChannel second = open(new ConnectionGuard(metrics, 2, IDLE_MS, REQUEST_MS), new HoldingHandler());
        EmbeddedChannel third = open(new ConnectionGuard(metrics, 2, IDLE_MS, REQUEST_MS), new HoldingHandler());
        assertThat(first.isActive()).isTrue();
        assertThat(second.isActive()).isTrue();
        assertThat(third.isActive()).isFalse();
        assertThat(written(third)).startsWith("HTTP/1.1 503 Service Unavailable\r\n").contains("retry-after: 1");
        assertThat(metrics.openConnections.get()).isEqualTo(2);
        assertThat(metrics.connectionsRejected.sum()).isEqualTo(1);

        first.close();
        assertThat(metrics.openConnections.get()).isEqualTo(1);
        EmbeddedChannel fourth = open(new ConnectionGuard(metrics, 2, IDLE_MS, REQUEST_MS), new HoldingHandler());
        assertThat(fourth.isActive()).as("room again once one closed").isTrue();
    }

    // ---------------------------------------------------------------- header deadline, unauthenticated connections

    private static final long HEADER_MS = 1_000;

    /** The holder of the channel opened last by {@link #openWithGate}. */
    private GuardedHolder holder;

    /** As {@link HoldingHandler}, telling its own guard. */
    private static final class GuardedHolder extends ChannelInboundHandlerAdapter {
        private final ConnectionGuard guard;
        ChannelHandlerContext ctx;

        GuardedHolder(ConnectionGuard guard) {
            this.guard = guard;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            this.ctx = ctx;
            ((FullHttpRequest) msg).release();
            guard.requestReceived(ctx);
        }
    }

    private EmbeddedChannel openWithGate(ConnectionGuard g, io.sluice.net.security.TokenAuthenticator auth) {
        holder = new GuardedHolder(g);
        return opened(EmbeddedChannel.builder().ticker(ticker)
                .handlers(g, new HttpServerCodec(), new AuthGate(auth, g), new BodyAggregator(1024, metrics), holder).build());
    }

    @Test
    void requestHeadersMustArriveWithinTheHeaderTimeoutThenOnlyTheRequestDeadlineApplies() {
        ConnectionGuard g = new ConnectionGuard(metrics, 10, IDLE_MS, REQUEST_MS, HEADER_MS, 0);
        EmbeddedChannel slowHead = openWithGate(g, null);
        slowHead.writeInbound(Unpooled.copiedBuffer("POST /x HTTP/1.1\r\nHost: y\r\n", StandardCharsets.US_ASCII));
        advance(slowHead, HEADER_MS - 1);
        assertThat(slowHead.isActive()).isTrue();
        advance(slowHead, 1);
        assertThat(slowHead.isActive()).isFalse();
        assertThat(written(slowHead)).startsWith("HTTP/1.1 408 Request Timeout\r\n").contains("http.header.timeout.ms");
        assertThat(metrics.headerTimeouts.sum()).isEqualTo(1);

        ConnectionGuard g2 = new ConnectionGuard(metrics, 10, IDLE_MS, REQUEST_MS, HEADER_MS, 0);
        EmbeddedChannel slowBody = openWithGate(g2, null);
        slowBody.writeInbound(Unpooled.copiedBuffer("POST /x HTTP/1.1\r\nHost: y\r\nContent-Length: 5\r\n\r\n12", StandardCharsets.US_ASCII));
        advance(slowBody, HEADER_MS + 1);
        assertThat(slowBody.isActive()).as("headers arrived in time").isTrue();
        advance(slowBody, REQUEST_MS - HEADER_MS - 1);
        assertThat(slowBody.isActive()).as("idle=%d request=%d header=%d", metrics.idleTimeouts.sum(),
                metrics.requestTimeouts.sum(), metrics.headerTimeouts.sum()).isFalse();
        assertThat(written(slowBody)).startsWith("HTTP/1.1 408 Request Timeout\r\n").contains("http.request.timeout.ms");
        assertThat(metrics.requestTimeouts.sum()).isEqualTo(1);
    }

    @Test
    void withATokenAConnectionThatHasNotAuthenticatedIsClosedAfterTheHeaderTimeoutInsteadOfTheIdleTimeout() {
        io.sluice.net.security.TokenAuthenticator auth = io.sluice.net.security.TokenAuthenticator.of("guard-test-token-0123456789");
        ConnectionGuard silent = new ConnectionGuard(metrics, 10, IDLE_MS, REQUEST_MS, HEADER_MS, 5);
        EmbeddedChannel unauthenticated = openWithGate(silent, auth);
        assertThat(metrics.unauthenticatedConnections.get()).isEqualTo(1);
        advance(unauthenticated, HEADER_MS);
        assertThat(unauthenticated.isActive()).isFalse();
        assertThat(metrics.headerTimeouts.sum()).isEqualTo(1);
        assertThat(metrics.unauthenticatedConnections.get()).isZero();

        ConnectionGuard authed = new ConnectionGuard(metrics, 10, IDLE_MS, REQUEST_MS, HEADER_MS, 5);
        EmbeddedChannel authenticated = openWithGate(authed, auth);
        authenticated.writeInbound(Unpooled.copiedBuffer("GET /v1/topics HTTP/1.1\r\nHost: y\r\n"
                + "Authorization: Bearer guard-test-token-0123456789\r\n\r\n", StandardCharsets.US_ASCII));
        assertThat(metrics.unauthenticatedConnections.get()).isZero();
        authed.responseSent(holder.ctx, false);
        advance(authenticated, HEADER_MS);
        assertThat(authenticated.isActive()).as("authenticated: the idle timeout applies").isTrue();
        advance(authenticated, IDLE_MS - HEADER_MS);
        assertThat(authenticated.isActive()).isFalse();
    }

    @Test
    void withATokenConnectionsBeyondMaxUnauthenticatedGet503() {
        io.sluice.net.security.TokenAuthenticator auth = io.sluice.net.security.TokenAuthenticator.of("guard-test-token-0123456789");
        EmbeddedChannel first = openWithGate(new ConnectionGuard(metrics, 10, IDLE_MS, REQUEST_MS, HEADER_MS, 1), auth);
        EmbeddedChannel second = openWithGate(new ConnectionGuard(metrics, 10, IDLE_MS, REQUEST_MS, HEADER_MS, 1), auth);
        assertThat(first.isActive()).isTrue();
        assertThat(second.isActive()).isFalse();
        assertThat(written(second)).startsWith("HTTP/1.1 503 Service Unavailable\r\n").contains("http.max.unauthenticated.connections");
        assertThat(metrics.unauthenticatedRejected.sum()).isEqualTo(1);
        assertThat(metrics.openConnections.get()).isEqualTo(1);
        assertThat(metrics.unauthenticatedConnections.get()).isEqualTo(1);
    }
}
