package io.sluice.net.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.timeout.IdleStateEvent;
import io.sluice.core.PartitionReader;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.FrameDecoder;
import io.sluice.net.protocol.Frames;
import io.sluice.net.protocol.ProtocolException;
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
 */
public final class RequestHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(RequestHandler.class);

    final ServerContext server;
    private final int maxInFlight;
    private final ArrayDeque<ByteBuf> waiting = new ArrayDeque<>();
    private final ByteBuf[] responses;
    private final Map<TopicPartition, PartitionReader> readers = new HashMap<>();
    private ChannelHandlerContext ctx;
    private long nextSequence;
    private long nextToWrite;
    private Object barrier;
    private boolean authenticated;
    private long closeAfterSequence = -1;
    boolean draining;
    /** True while {@link #startWaiting} loops, so synchronous completions do not recurse into it. */
    private boolean startingRequests;
    private ScheduledFuture<?> frameCheck;

    public RequestHandler(ServerContext server) {
        this.server = server;
        this.maxInFlight = server.config.maxInFlightPerConnection();
        this.responses = new ByteBuf[maxInFlight];
        this.authenticated = !server.authRequired();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        long period = Math.max(10, Math.min(1_000, server.config.frameTimeoutMillis() / 4));
        frameCheck = ctx.executor().scheduleAtFixedRate(this::closeSlowFrames, period, period, TimeUnit.MILLISECONDS);
        super.channelActive(ctx);
    }

    /** Slow-drip defence: a frame that started arriving must complete within frameTimeoutMillis. */
    private void closeSlowFrames() {
        FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
        if (decoder != null && decoder.partialFrameAgeNanos(System.nanoTime()) > TimeUnit.MILLISECONDS.toNanos(server.config.frameTimeoutMillis())) {
            server.counters.protocolErrors.increment();
            LOG.warn("closing connection {}: a frame stayed incomplete for more than frameTimeoutMillis={}",
                    ctx.channel().remoteAddress(), server.config.frameTimeoutMillis());
            ctx.close();
        }
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
        }
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
                fail(sequence, correlationId, SluiceException.Code.UNSUPPORTED_VERSION, "unknown api key " + apiId);
            } else if (!api.supports(version)) {
                fail(sequence, correlationId, SluiceException.Code.UNSUPPORTED_VERSION,
                        api + " version " + version + " is not supported (supported: " + api.minVersion + ".." + api.maxVersion + ")");
            } else if (!authenticated && api != ApiKey.API_VERSIONS && api != ApiKey.AUTHENTICATE) {
                fail(sequence, correlationId, SluiceException.Code.AUTHENTICATION_FAILED, "authenticate first");
            } else {
                Requests.dispatch(this, api, sequence, correlationId, frame);
            }
        } catch (ProtocolException | IndexOutOfBoundsException e) {
            fail(sequence, correlationId, SluiceException.Code.INVALID_REQUEST, "malformed " + api + " request: " + e.getMessage());
        } catch (SluiceException e) {
            fail(sequence, correlationId, e.code(), e.getMessage());
        } catch (RuntimeException e) {
            LOG.warn("{} request from {} failed", api, ctx.channel().remoteAddress(), e);
            fail(sequence, correlationId, SluiceException.Code.UNKNOWN, e.toString());
        }
    }

    // ---------------------------------------------------------------- used by the request implementations

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
        } else {
            LOG.warn("closing connection {}: authentication failed", ctx.channel().remoteAddress());
            closeAfterSequence = sequence;
        }
    }

    /** The connection's reader for a partition (opened lazily; closed with the connection). */
    PartitionReader reader(TopicPartition tp) {
        PartitionReader reader = readers.get(tp);
        if (reader == null) {
            reader = server.broker.openReader(tp);
            readers.put(tp, reader);
        }
        return reader;
    }

    /** Builds a success response with {@code body} and completes the request. Any thread. */
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
        } catch (RuntimeException e) {
            out.release();
            throw e;
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
            LOG.warn("request from {} failed", ctx.channel().remoteAddress(), error);
            fail(sequence, correlationId, SluiceException.Code.UNKNOWN, String.valueOf(error));
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
        startWaiting();
    }

    private void closeIfDrained() {
        if (draining && waiting.isEmpty() && nextToWrite == nextSequence && ctx.channel().isActive()) {
            ctx.writeAndFlush(ctx.alloc().buffer(0)).addListener(ChannelFutureListener.CLOSE);
        }
    }
}
