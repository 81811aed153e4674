package io.sluice.net.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.concurrent.FastThreadLocal;
import io.sluice.core.PartitionReader;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.FrameDecoder;
import io.sluice.net.protocol.Frames;
import io.sluice.net.protocol.ProtocolException;
import io.sluice.records.RecordBatchChecker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One connection's request pipeline. All state is confined to the connection's event loop (single writer);
 * completions from journal threads and the admin thread hop back onto it.
 *
 * <p>Ordering: requests <em>start</em> in arrival order and responses are <em>written</em> in arrival order, whatever
 * order they complete in (a ring of response slots indexed by request sequence). A request that must finish before
 * the next may start (a produce waiting for ring space, an admin call) sets {@link #barrier}.
 *
 * <p>Back-pressure: the connection stops reading ({@code autoRead=false}) while a barrier is up, while
 * {@code maxInFlightPerConnection} requests are unanswered, or while the socket is not writable (the client does not
 * read its responses). Nothing is buffered beyond what one socket read already delivered.
 *
 * <p>Before authentication (when a token is configured) a connection is held to little: frames of at most
 * {@code authMaxFrameBytes} (checked on the length field by the {@link FrameDecoder}), only API_VERSIONS and
 * AUTHENTICATE, {@code authTimeoutMillis} to succeed, and at most {@code maxUnauthenticatedConnections} such
 * connections at a time. Anything else closes it with a logged reason, counted in
 * {@code ServerStats.unauthenticatedCloses} (or {@code unauthenticatedRefused} for the connection bound).
 *
 * <p>A request whose operation fails unexpectedly (anything but a {@link SluiceException}, on any thread) is answered
 * {@code UNKNOWN} and the connection stays usable: no request is left without an answer, which would hold back every
 * later response on the connection.
 */
public final class RequestHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(RequestHandler.class);

    final ServerContext server;
    /** Checks PRODUCE batches: one per event-loop thread (it is reusable and single-threaded), not per connection. */
    private static final FastThreadLocal<RecordBatchChecker> BATCH_CHECKER = new FastThreadLocal<>() {
        @Override
        protected RecordBatchChecker initialValue() {
            return new RecordBatchChecker();
        }
    };
    private final int maxInFlight;
    private final ArrayDeque<ByteBuf> waiting = new ArrayDeque<>();
    private final ByteBuf[] responses;
    /** fetches with records ready that wait for their response to be the next written (see {@link #canWriteNow}). */
    private final Runnable[] turnWaiters;
    private final Map<TopicPartition, PartitionReader> readers = new HashMap<>();
    private ChannelHandlerContext ctx;
    private long nextSequence;
    private long nextToWrite;
    private Object barrier;
    private boolean authenticated;
    private long closeAfterSequence = -1;
    boolean draining;
    /** long-polling fetches waiting for an append (event loop only): a drain answers them at once */
    final java.util.Set<Runnable> waitingFetches = new java.util.HashSet<>();
    /** True while {@link #startWaiting} loops, so synchronous completions do not recurse into it. */
    private boolean startingRequests;
    private ScheduledFuture<?> frameCheck;
    private ScheduledFuture<?> authDeadline;
    /** True while this connection counts in {@code ServerCounters.unauthenticatedConnections}. */
    private boolean countedUnauthenticated;

    public RequestHandler(ServerContext server) {
        this.server = server;
        this.maxInFlight = server.config.maxInFlightPerConnection();
        this.responses = new ByteBuf[maxInFlight];
        this.turnWaiters = new Runnable[maxInFlight];
        this.authenticated = !server.authRequired();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (!authenticated) {
            FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
            if (decoder != null) {
                decoder.limit(server.config.preAuthFrameLimit());
            }
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        if (!authenticated) {
            if (server.counters.unauthenticatedConnections.incrementAndGet() > server.config.maxUnauthenticatedConnections()) {
                server.counters.unauthenticatedConnections.decrementAndGet();
                server.counters.unauthenticatedRefused.increment();
                long refused = server.counters.unauthenticatedRefused.sum();
                if (Long.bitCount(refused) == 1) { // 1st, 2nd, 4th...: a connection storm cannot flood the log
                    LOG.warn("refusing connection from {}: maxUnauthenticatedConnections={} are open and not authenticated; {} refused so far",
                            ctx.channel().remoteAddress(), server.config.maxUnauthenticatedConnections(), refused);
                }
                ctx.close();
                return;
            }
            countedUnauthenticated = true;
            authDeadline = ctx.executor().schedule(this::authTimedOut, server.config.authTimeoutMillis(), TimeUnit.MILLISECONDS);
        }
        super.channelActive(ctx);
    }

    private void authTimedOut() {
        if (!authenticated && ctx.channel().isActive()) {
            closeUnauthenticated("not authenticated within authTimeoutMillis=" + server.config.authTimeoutMillis());
        }
    }

    /** Closes a connection that has not authenticated, logging why (rate-limited) and counting it. */
    private void closeUnauthenticated(String reason) {
        server.counters.unauthenticatedCloses.increment();
        long closes = server.counters.unauthenticatedCloses.sum();
        if (Long.bitCount(closes) == 1) { // powers of two at WARN: many hostile peers cannot flood the log
            LOG.warn("closing connection {} before authenticating: {} ({} such closes so far)",
                    ctx.channel().remoteAddress(), reason, closes);
        } else {
            LOG.debug("closing connection {} before authenticating: {}", ctx.channel().remoteAddress(), reason);
        }
        ctx.close();
    }

    private void leaveUnauthenticated() {
        if (countedUnauthenticated) {
            countedUnauthenticated = false;
            server.counters.unauthenticatedConnections.decrementAndGet();
        }
        if (authDeadline != null) {
            authDeadline.cancel(false);
            authDeadline = null;
        }
    }

    /** Slow-drip defence: a frame that started arriving must complete within frameTimeoutMillis. */
    /**
     * After each read: when a frame is left incomplete, arm a one-shot check for the moment it becomes too old
     * ({@code frameTimeoutMillis} after its first bytes). A connection without a partial frame has no timer, so an
     * idle connection (a long-polling fetch) never wakes its event loop.
     */
    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        armFrameCheck();
        super.channelReadComplete(ctx);
    }

    private void armFrameCheck() {
        if (frameCheck != null) {
            return;
        }
        FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
        long age = decoder == null ? 0 : decoder.partialFrameAgeNanos(System.nanoTime());
        if (age > 0) {
            long left = Math.max(0, TimeUnit.MILLISECONDS.toNanos(server.config.frameTimeoutMillis()) - age);
            frameCheck = ctx.executor().schedule(this::closeSlowFrames, left + 1, TimeUnit.NANOSECONDS);
        }
    }

    private void closeSlowFrames() {
        frameCheck = null;
        if (!ctx.channel().isActive()) {
            return;
        }
        FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
        if (decoder != null && decoder.partialFrameAgeNanos(System.nanoTime()) > TimeUnit.MILLISECONDS.toNanos(server.config.frameTimeoutMillis())) {
            server.counters.protocolErrors.increment();
            LOG.warn("closing connection {}: a frame stayed incomplete for more than frameTimeoutMillis={}",
                    ctx.channel().remoteAddress(), server.config.frameTimeoutMillis());
            ctx.close();
            return;
        }
        armFrameCheck(); // a newer partial frame (the old one completed): check it when it is due
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf frame)) {
            throw new IllegalStateException("expected a frame, got " + msg.getClass().getName());
        }
        waiting.add(frame);
        startWaiting();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        runTurnWaiter();
        startWaiting();
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            if (nextSequence != nextToWrite || barrier != null) {
                return; // serving a request (a long-poll fetch, an admin call): busy, not idle; the timer fires again
            }
            LOG.info("closing connection {}: idle for idleTimeoutMillis={}", ctx.channel().remoteAddress(),
                    server.config.idleTimeoutMillis());
            ctx.close();
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (root instanceof FrameDecoder.LimitExceededException tooLong && !authenticated) {
            closeUnauthenticated("frame of " + tooLong.length() + " bytes announced, authMaxFrameBytes=" + tooLong.limit());
            return;
        }
        if (cause instanceof TooLongFrameException || cause instanceof CorruptedFrameException
                || root instanceof TooLongFrameException || root instanceof CorruptedFrameException) {
            server.counters.protocolErrors.increment();
            LOG.warn("closing connection {}: bad frame: {}", ctx.channel().remoteAddress(), root.getMessage());
        } else if (root instanceof javax.net.ssl.SSLException) {
            LOG.warn("closing connection {}: TLS failed: {}", ctx.channel().remoteAddress(), root.getMessage());
        } else if (root instanceof IOException) {
            LOG.debug("closing connection {}: {}", ctx.channel().remoteAddress(), root.toString());
        } else {
            LOG.warn("closing connection {} after an unexpected error", ctx.channel().remoteAddress(), root);
        }
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (frameCheck != null) {
            frameCheck.cancel(false);
            frameCheck = null;
        }
        leaveUnauthenticated();
        for (ByteBuf frame : waiting) {
            frame.release();
        }
        waiting.clear();
        for (int i = 0; i < responses.length; i++) {
            if (responses[i] != null) {
                responses[i].release();
                responses[i] = null;
            }
        }
        for (PartitionReader reader : readers.values()) {
            reader.close();
        }
        readers.clear();
        super.channelInactive(ctx);
    }

    /** Server shutdown: read nothing more, answer what was received, then close. Runs on the event loop. */
    public void beginDrain() {
        draining = true;
        ctx.channel().config().setAutoRead(false);
        for (Runnable fetch : java.util.List.copyOf(waitingFetches)) {
            fetch.run();
        }
        closeIfDrained();
    }

    // ---------------------------------------------------------------- request flow

    private void startWaiting() {
        if (startingRequests) {
            // re-entered from a request that completed synchronously: the loop below continues with the next one
            return;
        }
        startingRequests = true;
        try {
            // not writable: the client is not reading its responses; starting more would queue them without bound
            while (barrier == null && !waiting.isEmpty() && nextSequence - nextToWrite < maxInFlight
                    && closeAfterSequence < 0 && ctx.channel().isActive() && ctx.channel().isWritable()) {
                ByteBuf frame = waiting.poll();
                try {
                    start(nextSequence++, frame);
                } finally {
                    frame.release();
                }
            }
        } finally {
            startingRequests = false;
        }
        boolean read = !draining && barrier == null && waiting.isEmpty() && nextSequence - nextToWrite < maxInFlight
                && ctx.channel().isWritable() && closeAfterSequence < 0;
        if (ctx.channel().config().isAutoRead() != read) {
            ctx.channel().config().setAutoRead(read);
        }
        closeIfDrained();
    }

    private void start(long sequence, ByteBuf frame) {
        server.counters.requests.increment();
        short apiId = frame.readShort();
        short version = frame.readShort();
        int correlationId = frame.readInt();
        ApiKey api = ApiKey.of(apiId);
        try {
            if (api == null) {
                if (!authenticated) {
                    closeAfter(sequence, "unknown api key " + apiId);
                }
                fail(sequence, correlationId, SluiceException.Code.UNSUPPORTED_VERSION, "unknown api key " + apiId);
            } else if (!api.supports(version)) {
                fail(sequence, correlationId, SluiceException.Code.UNSUPPORTED_VERSION,
                        api + " version " + version + " is not supported (supported: " + api.minVersion + ".." + api.maxVersion + ")");
            } else if (!authenticated && api != ApiKey.API_VERSIONS && api != ApiKey.AUTHENTICATE) {
                closeAfter(sequence, api + " request (only API_VERSIONS and AUTHENTICATE are accepted)");
                fail(sequence, correlationId, SluiceException.Code.AUTHENTICATION_FAILED, "authenticate first");
            } else {
                Requests.dispatch(this, api, version, sequence, correlationId, frame);
            }
        } catch (ProtocolException | IndexOutOfBoundsException e) {
            fail(sequence, correlationId, SluiceException.Code.INVALID_REQUEST, "malformed " + api + " request: " + e.getMessage());
        } catch (SluiceException e) {
            fail(sequence, correlationId, e.code(), e.getMessage());
        } catch (RuntimeException e) {
            server.counters.internalErrors.increment();
            LOG.warn("{} request from {} failed", api, ctx.channel().remoteAddress(), e);
            fail(sequence, correlationId, SluiceException.Code.UNKNOWN, e.toString());
        }
    }

    /** Before authentication: answer {@code sequence}, then close, counted as an unauthenticated close. */
    private void closeAfter(long sequence, String reason) {
        if (closeAfterSequence < 0) {
            closeAfterSequence = sequence;
            server.counters.unauthenticatedCloses.increment();
            LOG.info("closing connection {} before authenticating: {}", ctx.channel().remoteAddress(), reason);
        }
    }

    // ---------------------------------------------------------------- used by the request implementations

    /** The PRODUCE batch checker of this event loop's thread. */
    RecordBatchChecker batchChecker() {
        return BATCH_CHECKER.get();
    }

    ChannelHandlerContext ctx() {
        return ctx;
    }

    void setBarrier(Object owner) {
        barrier = owner;
    }

    void clearBarrier(Object owner) {
        if (barrier == owner) {
            barrier = null;
            startWaiting();
        }
    }

    void authenticated(boolean ok, long sequence) {
        if (ok) {
            authenticated = true;
            leaveUnauthenticated();
            FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
            if (decoder != null) {
                decoder.limit(server.config.maxFrameSize());
            }
        } else if (!authenticated) {
            closeAfter(sequence, "authentication failed (wrong token)");
        } else {
            LOG.warn("closing connection {}: authentication failed", ctx.channel().remoteAddress());
            closeAfterSequence = sequence;
        }
    }

    /** The connection's reader for a partition (opened lazily; closed with the connection). */
    PartitionReader reader(TopicPartition tp) {
        PartitionReader reader = readers.get(tp);
        if (reader == null) {
            reader = server.front.openReader(tp);
            readers.put(tp, reader);
        }
        return reader;
    }

    /** Builds a success response with {@code body} and completes the request. Any thread. */
    /**
     * True when the response of {@code sequence} would be written at once: every earlier response is out and the
     * socket takes more. Fetches build their records only then, so a client that pipelines long-polls and stops
     * reading makes the broker hold at most one fetch response beyond the socket's write buffer.
     */
    boolean canWriteNow(long sequence) {
        return sequence == nextToWrite && ctx.channel().isWritable();
    }

    /** Runs {@code operation} again once {@link #canWriteNow(long)} holds for {@code sequence}. Event loop only. */
    void awaitTurn(long sequence, Runnable operation) {
        turnWaiters[(int) (sequence % maxInFlight)] = operation;
        runTurnWaiter();
    }

    private void runTurnWaiter() {
        if (nextToWrite >= nextSequence || !ctx.channel().isWritable()) {
            return;
        }
        int slot = (int) (nextToWrite % maxInFlight);
        Runnable waiter = turnWaiters[slot];
        if (waiter != null) {
            turnWaiters[slot] = null;
            waiter.run();
        }
    }

    void succeed(long sequence, int correlationId, Consumer<ByteBuf> body) {
        succeed(sequence, correlationId, body, 256);
    }

    /** As {@link #succeed(long, int, Consumer)}, allocating {@code sizeHint} bytes up front. */
    void succeed(long sequence, int correlationId, Consumer<ByteBuf> body, int sizeHint) {
        ByteBuf out = ctx.alloc().ioBuffer(sizeHint);
        try {
            int start = Frames.startResponse(out, correlationId);
            body.accept(out);
            Frames.finish(out, start);
        } catch (RuntimeException | Error e) {
            out.release();
            // an answer for every request: one left unanswered would hold back every later response (a wedge)
            fail(sequence, correlationId, e);
            if (e instanceof VirtualMachineError fatal) {
                throw fatal;
            }
            return;
        }
        complete(sequence, out);
    }

    void fail(long sequence, int correlationId, SluiceException.Code code, String message) {
        server.counters.errorResponses.increment();
        ByteBuf out = ctx.alloc().ioBuffer(64);
        Frames.writeError(out, correlationId, code, message);
        complete(sequence, out);
    }

    void fail(long sequence, int correlationId, Throwable error) {
        if (error instanceof SluiceException se) {
            fail(sequence, correlationId, se.code(), se.getMessage());
        } else {
            server.counters.internalErrors.increment();
            LOG.warn("request from {} failed unexpectedly; answered UNKNOWN, the connection stays open",
                    ctx.channel().remoteAddress(), error);
            fail(sequence, correlationId, SluiceException.Code.UNKNOWN, "internal error: " + error);
        }
    }

    /** Completes request {@code sequence} with a finished response frame. Any thread; hops to the event loop. */
    void complete(long sequence, ByteBuf response) {
        if (!ctx.executor().inEventLoop()) {
            ctx.executor().execute(() -> complete(sequence, response));
            return;
        }
        if (!ctx.channel().isActive()) {
            response.release();
            return;
        }
        responses[(int) (sequence % maxInFlight)] = response;
        if (sequence != nextToWrite) {
            return;
        }
        boolean wrote = false;
        ByteBuf next;
        while ((next = responses[(int) (nextToWrite % maxInFlight)]) != null && nextToWrite < nextSequence) {
            responses[(int) (nextToWrite % maxInFlight)] = null;
            ctx.write(next, ctx.voidPromise());
            wrote = true;
            if (nextToWrite++ == closeAfterSequence) {
                ctx.writeAndFlush(ctx.alloc().buffer(0)).addListener(ChannelFutureListener.CLOSE);
                return;
            }
        }
        if (wrote) {
            ctx.flush();
        }
        runTurnWaiter();
        startWaiting();
    }

    private void closeIfDrained() {
        if (draining && waiting.isEmpty() && nextToWrite == nextSequence && ctx.channel().isActive()) {
            ctx.writeAndFlush(ctx.alloc().buffer(0)).addListener(ChannelFutureListener.CLOSE);
        }
    }
}
