package io.sluice.net.http.internal;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * First handler after TLS: enforces the connection limit and the two time bounds of a connection.
 * <ul>
 *   <li><b>idle</b>: no request in progress and no byte for {@code idleTimeoutMillis} → closed quietly;</li>
 *   <li><b>request</b>: a request whose first byte arrived {@code requestTimeoutMillis} ago and that is still not
 *       complete → {@code 408} and closed. A slow-drip ("slowloris") client that sends a byte now and then never
 *       looks idle, so only a deadline on the whole request bounds it;</li>
 *   <li>while a complete request is being processed (acknowledgements pending) neither applies.</li>
 * </ul>
 * It sits before the HTTP codec and so sees raw bytes; the API handler tells it when a request was completely
 * received ({@link #requestReceived}) and answered ({@link #responseSent}). All methods run on the channel's event
 * loop (single writer of the state).
 */
public final class ConnectionGuard extends ChannelDuplexHandler {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionGuard.class);
    private static final byte[] TIMEOUT_408 = raw(408, "Request Timeout",
            "{\"code\":\"TIMEOUT\",\"message\":\"request not received completely within http.request.timeout.ms\"}");
    private static final byte[] BUSY_503 = raw(503, "Service Unavailable",
            "{\"code\":\"BACK_PRESSURED\",\"message\":\"too many connections (http.max.connections)\"}");

    private enum State { IDLE, RECEIVING, PROCESSING }

    private final HttpMetrics metrics;
    private final int maxConnections;
    private final long idleTimeoutNanos;
    private final long requestTimeoutNanos;

    private State state = State.IDLE;
    private long stateSinceNanos;
    private ScheduledFuture<?> timer;
    private boolean counted;

    public ConnectionGuard(HttpMetrics metrics, int maxConnections, long idleTimeoutMillis, long requestTimeoutMillis) {
        this.metrics = metrics;
        this.maxConnections = maxConnections;
        this.idleTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(idleTimeoutMillis);
        this.requestTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(requestTimeoutMillis);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        if (metrics.openConnections.incrementAndGet() > maxConnections) {
            metrics.openConnections.decrementAndGet();
            metrics.connectionsRejected.increment();
            long refused = metrics.connectionsRejected.sum();
            if (Long.bitCount(refused) == 1) { // 1st, 2nd, 4th, 8th...: a connection storm cannot flood the log
                LOG.warn("refusing HTTP connection from {}: {} connections open (http.max.connections); {} refused so far",
                        ctx.channel().remoteAddress(), maxConnections, refused);
            }
            ctx.writeAndFlush(Unpooled.wrappedBuffer(BUSY_503)).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        counted = true;
        metrics.connectionsAccepted.increment();
        enter(ctx, State.IDLE);
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        cancelTimer();
        if (counted) {
            counted = false;
            metrics.openConnections.decrementAndGet();
        }
        super.channelInactive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (!counted) {
            io.netty.util.ReferenceCountUtil.release(msg); // refused connection: ignore what it sends while closing
            return;
        }
        if (state == State.IDLE) {
            enter(ctx, State.RECEIVING);
        }
        ctx.fireChannelRead(msg);
    }

    /** The API handler has a complete request: time bounds pause until it is answered. */
    public void requestReceived(ChannelHandlerContext ctx) {
        enter(ctx, State.PROCESSING);
    }

    /** The API handler answered; with {@code morePending} another complete request is already queued. */
    public void responseSent(ChannelHandlerContext ctx, boolean morePending) {
        enter(ctx, morePending ? State.PROCESSING : State.IDLE);
    }

    private void enter(ChannelHandlerContext ctx, State next) {
        state = next;
        stateSinceNanos = System.nanoTime();
        cancelTimer();
        if (next == State.IDLE) {
            schedule(ctx, idleTimeoutNanos);
        } else if (next == State.RECEIVING) {
            schedule(ctx, requestTimeoutNanos);
        }
    }

    private void schedule(ChannelHandlerContext ctx, long delayNanos) {
        timer = ctx.executor().schedule(() -> expire(ctx), delayNanos, TimeUnit.NANOSECONDS);
    }

    private void expire(ChannelHandlerContext ctx) {
        timer = null;
        if (!ctx.channel().isActive()) {
            return;
        }
        if (state == State.IDLE) {
            metrics.idleTimeouts.increment();
            LOG.debug("closing idle HTTP connection {} after {} ms", ctx.channel().remoteAddress(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stateSinceNanos));
            ctx.close();
        } else if (state == State.RECEIVING) {
            metrics.requestTimeouts.increment();
            long slow = metrics.requestTimeouts.sum();
            if (Long.bitCount(slow) == 1) { // powers of two only: many slow clients cannot flood the log
                LOG.info("closing HTTP connection {}: request not complete after {} ms (http.request.timeout.ms); {} so far",
                        ctx.channel().remoteAddress(), TimeUnit.NANOSECONDS.toMillis(requestTimeoutNanos), slow);
            }
            ctx.writeAndFlush(Unpooled.wrappedBuffer(TIMEOUT_408)).addListener(ChannelFutureListener.CLOSE);
        }
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    /** A complete HTTP/1.1 response written below the codec (raw bytes), closing the connection. */
    private static byte[] raw(int status, String reason, String jsonBody) {
        byte[] body = jsonBody.getBytes(StandardCharsets.UTF_8);
        String head = "HTTP/1.1 " + status + " " + reason + "\r\ncontent-type: application/json\r\ncontent-length: "
                + body.length + "\r\nconnection: close\r\n" + (status == 503 ? "retry-after: 1\r\n" : "") + "\r\n";
        byte[] h = head.getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[h.length + body.length];
        System.arraycopy(h, 0, all, 0, h.length);
        System.arraycopy(body, 0, all, h.length, body.length);
        return all;
    }
}
