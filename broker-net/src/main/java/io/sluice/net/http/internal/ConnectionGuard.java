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
 *   <li><b>headers</b>: a request's line and headers must arrive within {@code headerTimeoutMillis} of its first byte
 *       → {@code 408} and closed;</li>
 *   <li><b>unauthenticated</b> (when a token is configured): until the connection sent a request with a valid token
 *       ({@link #authenticated}), it counts against {@code maxUnauthenticatedConnections} (beyond it: {@code 503} and
 *       closed at once) and is closed after {@code headerTimeoutMillis} without a request instead of the idle
 *       timeout;</li>
 *   <li>while a complete request is being processed (acknowledgements pending) none applies.</li>
 * </ul>
 * It sits before the HTTP codec and so sees raw bytes; the API handler tells it when a request was completely
 * received ({@link #requestReceived}) and answered ({@link #responseSent}). All methods run on the channel's event
 * loop (single writer of the state).
 *
 * <p>One timer per connection, re-armed lazily: a state change only records the state and when it began, and the
 * timer, when it fires, compares the current state's deadline with the clock and either acts or re-arms itself. It
 * is armed at most {@code min(idle, header)} timeouts ahead, the shortest any state allows, so it never fires after
 * the deadline of a state entered later. A keep-alive connection therefore costs no timer operation per request (a
 * timer scheduled and cancelled at each of a request's state changes cost more than routing the request), and an
 * open connection one timer run every {@code min(idle, header)} at most.
 */
public final class ConnectionGuard extends ChannelDuplexHandler {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionGuard.class);
    private static final byte[] TIMEOUT_408 = raw(408, "Request Timeout",
            "{\"code\":\"TIMEOUT\",\"message\":\"request not received completely within http.request.timeout.ms\"}");
    private static final byte[] BUSY_503 = raw(503, "Service Unavailable",
            "{\"code\":\"BACK_PRESSURED\",\"message\":\"too many connections (http.max.connections)\"}");
    private static final byte[] UNAUTHENTICATED_BUSY_503 = raw(503, "Service Unavailable",
            "{\"code\":\"BACK_PRESSURED\",\"message\":\"too many unauthenticated connections (http.max.unauthenticated.connections)\"}");
    private static final byte[] HEADER_TIMEOUT_408 = raw(408, "Request Timeout",
            "{\"code\":\"TIMEOUT\",\"message\":\"request headers not received within http.header.timeout.ms\"}");

    private enum State { IDLE, RECEIVING, PROCESSING }

    private final HttpMetrics metrics;
    private final int maxConnections;
    private final long idleTimeoutNanos;
    private final long requestTimeoutNanos;
    private final long headerTimeoutNanos;
    /** 0 when no token is configured: connections are not counted as unauthenticated. */
    private final int maxUnauthenticated;

    /** How far ahead the timer is armed at most: the shortest timeout of any state. */
    private final long checkEveryNanos;

    private State state = State.IDLE;
    private long stateSinceNanos;
    /** Armed from {@link #channelActive} until the connection closes; runs {@link #check}. */
    private ScheduledFuture<?> timer;
    private boolean counted;
    /** True while this connection counts in {@code HttpMetrics.unauthenticatedConnections}. */
    private boolean countedUnauthenticated;
    private boolean authenticated;
    /** In RECEIVING: the request's headers arrived (only the request deadline applies now). */
    private boolean headersSeen;
    /** This handler's own context: timers write their 408 from here, below the HTTP codec (raw bytes). */
    private ChannelHandlerContext own;

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.own = ctx;
    }

    /** Without authentication and with the header deadline equal to the request deadline. */
    public ConnectionGuard(HttpMetrics metrics, int maxConnections, long idleTimeoutMillis, long requestTimeoutMillis) {
        this(metrics, maxConnections, idleTimeoutMillis, requestTimeoutMillis, requestTimeoutMillis, 0);
    }

    /**
     * @param maxUnauthenticated connections that have not authenticated allowed at once; 0 when no token is configured
     */
    public ConnectionGuard(HttpMetrics metrics, int maxConnections, long idleTimeoutMillis, long requestTimeoutMillis,
                           long headerTimeoutMillis, int maxUnauthenticated) {
        this.metrics = metrics;
        this.maxConnections = maxConnections;
        this.idleTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(idleTimeoutMillis);
        this.requestTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(requestTimeoutMillis);
        this.headerTimeoutNanos = Math.min(requestTimeoutNanos, TimeUnit.MILLISECONDS.toNanos(headerTimeoutMillis));
        this.maxUnauthenticated = maxUnauthenticated;
        this.authenticated = maxUnauthenticated == 0;
        this.checkEveryNanos = Math.min(idleTimeoutNanos, headerTimeoutNanos);
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
        if (!authenticated) {
            if (metrics.unauthenticatedConnections.incrementAndGet() > maxUnauthenticated) {
                metrics.unauthenticatedConnections.decrementAndGet();
                metrics.openConnections.decrementAndGet();
                metrics.unauthenticatedRejected.increment();
                long refused = metrics.unauthenticatedRejected.sum();
                if (Long.bitCount(refused) == 1) {
                    LOG.warn("refusing HTTP connection from {}: {} connections open without authenticating "
                            + "(http.max.unauthenticated.connections); {} refused so far", ctx.channel().remoteAddress(),
                            maxUnauthenticated, refused);
                }
                ctx.writeAndFlush(Unpooled.wrappedBuffer(UNAUTHENTICATED_BUSY_503)).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            countedUnauthenticated = true;
        }
        counted = true;
        metrics.connectionsAccepted.increment();
        enter(ctx, State.IDLE);
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        cancelTimer();
        // the unauthenticated slot first: whoever sees the open count drop may rely on the slot being free
        if (countedUnauthenticated) {
            countedUnauthenticated = false;
            metrics.unauthenticatedConnections.decrementAndGet();
        }
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

    /**
     * The head of the request being received arrived (the token, if any, is checked on it next): from now on only
     * the request deadline applies to it.
     */
    public void headersReceived(ChannelHandlerContext ctx) {
        if (state == State.RECEIVING) {
            headersSeen = true; // the deadline moves from the header timeout to the (later) request timeout
        }
    }

    /** A request of this connection carried a valid token: it no longer counts as unauthenticated. */
    public void authenticated() {
        authenticated = true;
        if (countedUnauthenticated) {
            countedUnauthenticated = false;
            metrics.unauthenticatedConnections.decrementAndGet();
        }
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
        stateSinceNanos = ctx.executor().ticker().nanoTime();
        if (next == State.RECEIVING) {
            headersSeen = false;
        }
        if (timer == null) {
            arm(checkEveryNanos);
        }
    }

    /** Nanoseconds until the current state's deadline (negative once passed), or {@link Long#MAX_VALUE} for none. */
    private long timeLeft(long now) {
        long timeout = switch (state) {
            case IDLE -> authenticated ? idleTimeoutNanos : Math.min(idleTimeoutNanos, headerTimeoutNanos);
            case RECEIVING -> headersSeen ? requestTimeoutNanos : headerTimeoutNanos;
            case PROCESSING -> -1;
        };
        return timeout < 0 ? Long.MAX_VALUE : timeout - (now - stateSinceNanos);
    }

    private void arm(long delayNanos) {
        timer = own.executor().schedule(this::check, delayNanos, TimeUnit.NANOSECONDS);
    }

    /** The timer fired: act if the current state's deadline has passed, otherwise re-arm (see the class comment). */
    private void check() {
        timer = null;
        ChannelHandlerContext ctx = own; // answers go out below the codec
        if (!ctx.channel().isActive()) {
            return;
        }
        long left = timeLeft(ctx.executor().ticker().nanoTime());
        if (left <= 0) {
            expire(ctx);
        } else {
            arm(Math.min(left, checkEveryNanos));
        }
    }

    private void expire(ChannelHandlerContext ctx) {
        if (state == State.IDLE && !authenticated && headerTimeoutNanos < idleTimeoutNanos) {
            metrics.headerTimeouts.increment();
            LOG.debug("closing HTTP connection {}: no request within {} ms and not authenticated (http.header.timeout.ms)",
                    ctx.channel().remoteAddress(), TimeUnit.NANOSECONDS.toMillis(headerTimeoutNanos));
            ctx.close();
        } else if (state == State.RECEIVING && !headersSeen && headerTimeoutNanos < requestTimeoutNanos) {
            metrics.headerTimeouts.increment();
            long slow = metrics.headerTimeouts.sum();
            if (Long.bitCount(slow) == 1) {
                LOG.info("closing HTTP connection {}: request headers not complete after {} ms (http.header.timeout.ms); {} so far",
                        ctx.channel().remoteAddress(), TimeUnit.NANOSECONDS.toMillis(headerTimeoutNanos), slow);
            }
            ctx.writeAndFlush(Unpooled.wrappedBuffer(HEADER_TIMEOUT_408)).addListener(ChannelFutureListener.CLOSE);
        } else if (state == State.IDLE) {
            metrics.idleTimeouts.increment();
            LOG.debug("closing idle HTTP connection {} after {} ms", ctx.channel().remoteAddress(),
                    TimeUnit.NANOSECONDS.toMillis(ctx.executor().ticker().nanoTime() - stateSinceNanos));
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
