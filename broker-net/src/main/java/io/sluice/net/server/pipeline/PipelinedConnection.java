package io.sluice.net.server.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.core.PartitionReader;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.BrokerFront;
import io.sluice.net.protocol.FrameDecoder;
import io.sluice.net.server.BrokerServerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.SocketAddress;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One connection of a length-framed request/response protocol: what Sluice's binary port ({@code RequestHandler}) and
 * its Kafka listener ({@code KafkaConnection}) share, so that the bounds and the ordering below hold on both ports by
 * construction. A subclass decodes a frame and starts its request in {@link #start(ByteBuf)}; everything else is here.
 * All state is confined to the connection's event loop (single writer); completions from other threads hop onto it.
 *
 * <p>Ordering: requests <em>start</em> in arrival order and responses are <em>written</em> in arrival order, whatever
 * order they complete in (a ring of {@code max.inflight.per.connection} response slots indexed by request sequence).
 * A request may complete without a response (Kafka's acks=0). A request that must finish before the next may start (a
 * produce waiting for ring space, an admin call) raises a barrier ({@link #setBarrier}).
 *
 * <p>Back-pressure: the connection stops reading ({@code autoRead=false}) while a barrier is up, while
 * {@code max.inflight.per.connection} requests are unanswered, or while the socket is not writable (the client does
 * not read its responses). Nothing is buffered beyond what one socket read already delivered.
 *
 * <p>Before authentication (when a token is configured) a connection is held to little: frames of at most
 * {@code auth.max.frame.bytes} (refused from the length field by the {@link FrameDecoder}), {@code auth.timeout.ms} to
 * authenticate, at most {@code max.unauthenticated.connections} such connections at a time; which APIs it may call
 * is the subclass's rule. Each close is logged (rate-limited: 1st, 2nd, 4th, ... at WARN) and counted.
 *
 * <p>Readers: a partition's {@link PartitionReader} is opened at the connection's first fetch of it and kept for the
 * next (its position, its mapped journal file); one not fetched for {@code reader.idle.ms} is closed when the
 * connection next fetches anything, so a consumer whose assignment moved on does not keep the old partitions'
 * journal files mapped (their disk space after retention, their page cache) until it disconnects.
 *
 * <p>Slow drip: a frame that started arriving must complete within {@code frame.timeout.ms}; the check is armed only
 * while a frame is incomplete, so an idle connection (a long-polling fetch) never wakes its event loop.
 */
public abstract class PipelinedConnection extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(PipelinedConnection.class);

    private final BrokerServerConfig config;
    private final ConnectionCounters counters;
    private final BrokerFront front;
    /** how logs name a connection of this port: "connection", "Kafka connection" */
    private final String label;
    private final int maxInFlight;
    private final ArrayDeque<ByteBuf> waiting = new ArrayDeque<>();
    /** Finished responses by sequence % maxInFlight (null with {@link #done} set: answered with nothing). */
    private final ByteBuf[] responses;
    private final boolean[] done;
    /** Requests with an answer ready that wait for their response to be the next written (see {@link #canWriteNow}). */
    private final Runnable[] turnWaiters;
    private final Map<TopicPartition, OpenReader> readers = new HashMap<>();
    private final long readerIdleNanos;
    /** When {@link #reader} next looks for idle readers ({@link System#nanoTime}). */
    private long nextReaderSweep;
    /** Long-polling fetches waiting for an append: a drain or a close runs them at once. */
    private final Set<Runnable> waitingFetches = new HashSet<>();
    private ChannelHandlerContext ctx;
    private long nextSequence;
    private long nextToWrite;
    private Object barrier;
    private boolean authenticated;
    /** True while this connection counts in {@link ConnectionCounters#unauthenticatedConnections}. */
    private boolean countedUnauthenticated;
    /** True while {@link #startWaiting} loops, so synchronous completions do not recurse into it. */
    private boolean startingRequests;
    private boolean draining;
    private long closeAfterSequence = -1;
    private ScheduledFuture<?> authDeadline;
    private ScheduledFuture<?> frameCheck;

    protected PipelinedConnection(BrokerServerConfig config, ConnectionCounters counters, BrokerFront front,
                                  boolean authRequired, String label) {
        this.config = config;
        this.counters = counters;
        this.front = front;
        this.label = label;
        this.maxInFlight = config.maxInFlightPerConnection();
        this.responses = new ByteBuf[maxInFlight];
        this.done = new boolean[maxInFlight];
        this.turnWaiters = new Runnable[maxInFlight];
        this.authenticated = !authRequired;
        this.readerIdleNanos = TimeUnit.MILLISECONDS.toNanos(config.readerIdleMillis());
        this.nextReaderSweep = System.nanoTime();
    }

    /** A reader and when a fetch last used it. */
    private static final class OpenReader {
        final PartitionReader reader;
        long usedNanos;

        OpenReader(PartitionReader reader) {
            this.reader = reader;
        }
    }

    /**
     * Starts the request in {@code frame} (the frame without its length field; released by the caller when this
     * returns). A request that will be answered takes its place in the response order with {@link #nextSequence()}
     * and is completed, at once or later, with {@link #complete}; one that breaks the protocol may instead close the
     * connection ({@link #closeForProtocol}). Event loop.
     */
    protected abstract void start(ByteBuf frame);

    /** The next request's place in the response order. Event loop, from {@link #start}. */
    protected final long nextSequence() {
        return nextSequence++;
    }

    // ---------------------------------------------------------------- what requests use

    public final ChannelHandlerContext ctx() {
        return ctx;
    }

    public final EventExecutor eventLoop() {
        return ctx.executor();
    }

    public final ByteBufAllocator alloc() {
        return ctx.alloc();
    }

    public final SocketAddress remoteAddress() {
        return ctx.channel().remoteAddress();
    }

    public final boolean isActive() {
        return ctx.channel().isActive();
    }

    /** True once the server began shutting down: long-polls answer at once. */
    public final boolean isDraining() {
        return draining;
    }

    public final boolean isAuthenticated() {
        return authenticated;
    }

    /** Long-polling fetches of this connection; one registers itself here while it waits. Event loop only. */
    public final Set<Runnable> waitingFetches() {
        return waitingFetches;
    }

    /** Stops starting requests (and reading) until {@link #clearBarrier}. Event loop. */
    public final void setBarrier(Object owner) {
        barrier = owner;
    }

    public final void clearBarrier(Object owner) {
        if (barrier == owner) {
            barrier = null;
            startWaiting();
        }
    }

    /**
     * The connection's reader of a partition (opened lazily, closed with the connection or after
     * {@code reader.idle.ms} unused), for use within the calling fetch. Event loop.
     */
    public final PartitionReader reader(TopicPartition tp) {
        long now = System.nanoTime();
        if (now - nextReaderSweep >= 0) {
            closeIdleReaders(now);
            nextReaderSweep = now + Math.max(1, readerIdleNanos / 4);
        }
        OpenReader open = readers.get(tp);
        if (open == null) {
            open = new OpenReader(front.openReader(tp));
            readers.put(tp, open);
        }
        open.usedNanos = now;
        return open.reader;
    }

    private void closeIdleReaders(long now) {
        var it = readers.entrySet().iterator();
        while (it.hasNext()) {
            OpenReader open = it.next().getValue();
            if (now - open.usedNanos >= readerIdleNanos) {
                it.remove();
                open.reader.close();
            }
        }
    }

    /** Partitions this connection holds a reader of. Event loop. */
    public final Set<TopicPartition> openReaders() {
        return Set.copyOf(readers.keySet());
    }

    /** Drops a reader that failed (a damaged batch, a deleted topic); the next read opens a fresh one. Event loop. */
    public final void dropReader(TopicPartition tp) {
        OpenReader open = readers.remove(tp);
        if (open != null) {
            open.reader.close();
        }
    }

    /** Authentication succeeded: lift the pre-authentication bounds. Event loop. */
    public final void authenticated() {
        authenticated = true;
        leaveUnauthenticated();
        FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
        if (decoder != null) {
            decoder.limit(config.maxFrameSize());
        }
    }

    /** Answers {@code sequence} (and every earlier request), then closes; later requests are not started. Event loop. */
    public final void closeAfter(long sequence) {
        if (closeAfterSequence < 0 || sequence < closeAfterSequence) {
            closeAfterSequence = sequence;
        }
    }

    /**
     * True when the response of {@code sequence} would be written at once: every earlier response is out and the
     * socket takes more. Fetches build their records only then, so a client that pipelines long-polls and stops
     * reading makes the broker hold at most one fetch response beyond the socket's write buffer.
     */
    public final boolean canWriteNow(long sequence) {
        return sequence == nextToWrite && ctx.channel().isWritable();
    }

    /** Runs {@code operation} once {@link #canWriteNow(long)} holds for {@code sequence}. Event loop only. */
    public final void awaitTurn(long sequence, Runnable operation) {
        turnWaiters[(int) (sequence % maxInFlight)] = operation;
        runTurnWaiter();
    }

    /**
     * Completes request {@code sequence} without a response and closes the connection once every earlier response
     * is written: how an acks=0 producer learns that a produce failed. Any thread.
     */
    public final void completeAndClose(long sequence) {
        if (!ctx.executor().inEventLoop()) {
            ctx.executor().execute(() -> completeAndClose(sequence));
            return;
        }
        closeAfter(sequence);
        complete(sequence, null);
    }

    /**
     * Completes request {@code sequence} with a finished response frame ({@code null}: nothing to write). Any thread;
     * hops to the event loop. The frame is released if the connection is gone.
     */
    public final void complete(long sequence, ByteBuf response) {
        if (!ctx.executor().inEventLoop()) {
            ctx.executor().execute(() -> complete(sequence, response));
            return;
        }
        if (!ctx.channel().isActive()) {
            if (response != null) {
                response.release();
            }
            return;
        }
        int slot = (int) (sequence % maxInFlight);
        responses[slot] = response;
        done[slot] = true;
        if (sequence != nextToWrite) {
            return;
        }
        boolean wrote = false;
        while (nextToWrite < nextSequence && done[(int) (nextToWrite % maxInFlight)]) {
            int i = (int) (nextToWrite % maxInFlight);
            ByteBuf next = responses[i];
            responses[i] = null;
            done[i] = false;
            if (next != null) {
                ctx.write(next, ctx.voidPromise());
                wrote = true;
            }
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

    /** Server shutdown: read nothing more, answer what was received (long-polls at once), then close. Event loop. */
    public final void beginDrain() {
        draining = true;
        ctx.channel().config().setAutoRead(false);
        for (Runnable fetch : List.copyOf(waitingFetches)) {
            fetch.run();
        }
        closeIfDrained();
    }

    // ---------------------------------------------------------------- closing for a reason

    /** Closes a connection that has not authenticated, logging why (rate-limited) and counting it. */
    protected final void closeUnauthenticated(String reason) {
        counters.unauthenticatedCloses.increment();
        long closes = counters.unauthenticatedCloses.sum();
        if (Long.bitCount(closes) == 1) { // 1st, 2nd, 4th...: many hostile peers cannot flood the log
            LOG.warn("closing {} {} before authenticating: {} ({} such closes so far)", label, remoteAddress(), reason, closes);
        } else {
            LOG.debug("closing {} {} before authenticating: {}", label, remoteAddress(), reason);
        }
        ctx.close();
    }

    /**
     * Before authentication: answer {@code sequence}, then close, counted and logged as an unauthenticated close.
     * Event loop.
     */
    protected final void closeUnauthenticatedAfter(long sequence, String reason) {
        if (closeAfterSequence < 0) {
            closeAfterSequence = sequence;
            counters.unauthenticatedCloses.increment();
            LOG.info("closing {} {} before authenticating: {}", label, remoteAddress(), reason);
        }
    }

    /** Closes a connection whose bytes break the protocol, logging why (rate-limited) and counting it. */
    protected final void closeForProtocol(String reason) {
        counters.protocolErrors.increment();
        if (!authenticated) {
            closeUnauthenticated(reason);
            return;
        }
        long errors = counters.protocolErrors.sum();
        if (Long.bitCount(errors) == 1) { // 1st, 2nd, 4th...: a hostile peer cannot flood the log
            LOG.warn("closing {} {}: {} ({} protocol errors so far)", label, remoteAddress(), reason, errors);
        } else {
            LOG.debug("closing {} {}: {}", label, remoteAddress(), reason);
        }
        ctx.close();
    }

    // ---------------------------------------------------------------- connection life

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (!authenticated) {
            FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
            if (decoder != null) {
                decoder.limit(config.preAuthFrameLimit());
            }
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        if (!authenticated) {
            if (counters.unauthenticatedConnections.incrementAndGet() > config.maxUnauthenticatedConnections()) {
                counters.unauthenticatedConnections.decrementAndGet();
                counters.unauthenticatedRefused.increment();
                long refused = counters.unauthenticatedRefused.sum();
                if (Long.bitCount(refused) == 1) { // 1st, 2nd, 4th...: a connection storm cannot flood the log
                    LOG.warn("refusing {} from {}: {}={} are open and not authenticated; {} refused so far", label,
                            ctx.channel().remoteAddress(), BrokerServerConfig.MAX_UNAUTHENTICATED_CONNECTIONS,
                            config.maxUnauthenticatedConnections(), refused);
                }
                ctx.close();
                return;
            }
            countedUnauthenticated = true;
            authDeadline = ctx.executor().schedule(this::authTimedOut, config.authTimeoutMillis(), TimeUnit.MILLISECONDS);
        }
        super.channelActive(ctx);
    }

    private void authTimedOut() {
        if (!authenticated && ctx.channel().isActive()) {
            closeUnauthenticated("not authenticated within " + BrokerServerConfig.AUTH_TIMEOUT_MS + "=" + config.authTimeoutMillis());
        }
    }

    private void leaveUnauthenticated() {
        if (countedUnauthenticated) {
            countedUnauthenticated = false;
            counters.unauthenticatedConnections.decrementAndGet();
        }
        if (authDeadline != null) {
            authDeadline.cancel(false);
            authDeadline = null;
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        armFrameCheck();
        super.channelReadComplete(ctx);
    }

    /** After each read: when a frame is left incomplete, check it when it becomes too old; else arm nothing. */
    private void armFrameCheck() {
        if (frameCheck != null) {
            return;
        }
        FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
        long age = decoder == null ? 0 : decoder.partialFrameAgeNanos(System.nanoTime());
        if (age > 0) {
            long left = Math.max(0, TimeUnit.MILLISECONDS.toNanos(config.frameTimeoutMillis()) - age);
            frameCheck = ctx.executor().schedule(this::closeSlowFrames, left + 1, TimeUnit.NANOSECONDS);
        }
    }

    private void closeSlowFrames() {
        frameCheck = null;
        if (!ctx.channel().isActive()) {
            return;
        }
        FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
        if (decoder != null && decoder.partialFrameAgeNanos(System.nanoTime())
                > TimeUnit.MILLISECONDS.toNanos(config.frameTimeoutMillis())) {
            closeForProtocol("a frame stayed incomplete for more than " + BrokerServerConfig.FRAME_TIMEOUT_MS + "="
                    + config.frameTimeoutMillis());
            return;
        }
        armFrameCheck(); // a newer partial frame (the old one completed): check it when it is due
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            if (nextSequence != nextToWrite || barrier != null) {
                return; // serving a request (a long-poll fetch, an admin call): busy, not idle; the timer fires again
            }
            LOG.info("closing {} {}: idle for {}={}", label, ctx.channel().remoteAddress(),
                    BrokerServerConfig.IDLE_TIMEOUT_MS, config.idleTimeoutMillis());
            ctx.close();
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (root instanceof FrameDecoder.LimitExceededException tooLong && !authenticated) {
            closeUnauthenticated("frame of " + tooLong.length() + " bytes announced, "
                    + BrokerServerConfig.AUTH_MAX_FRAME_BYTES + "=" + tooLong.limit());
            return;
        }
        if (root instanceof TooLongFrameException || root instanceof CorruptedFrameException) {
            closeForProtocol("bad frame: " + root.getMessage());
            return;
        }
        if (root instanceof javax.net.ssl.SSLException) {
            LOG.warn("closing {} {}: TLS failed: {}", label, ctx.channel().remoteAddress(), root.getMessage());
        } else if (root instanceof IOException) {
            LOG.debug("closing {} {}: {}", label, ctx.channel().remoteAddress(), root.toString());
        } else {
            LOG.warn("closing {} {} after an unexpected error", label, ctx.channel().remoteAddress(), root);
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
        for (Runnable fetch : List.copyOf(waitingFetches)) {
            fetch.run(); // sees the closed channel: cancels its append wake-up and answers nothing
        }
        for (OpenReader open : readers.values()) {
            open.reader.close();
        }
        readers.clear();
        super.channelInactive(ctx);
    }

    // ---------------------------------------------------------------- request flow

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

    private void startWaiting() {
        if (startingRequests) {
            return; // re-entered from a request that completed synchronously: the loop below goes on
        }
        startingRequests = true;
        try {
            // not writable: the client is not reading its responses; starting more would queue them without bound
            while (barrier == null && !waiting.isEmpty() && nextSequence - nextToWrite < maxInFlight
                    && closeAfterSequence < 0 && ctx.channel().isActive() && ctx.channel().isWritable()) {
                ByteBuf frame = waiting.poll();
                try {
                    counters.requests.increment();
                    start(frame);
                } finally {
                    frame.release();
                }
            }
        } finally {
            startingRequests = false;
        }
        boolean read = !draining && barrier == null && waiting.isEmpty() && nextSequence - nextToWrite < maxInFlight
                && ctx.channel().isWritable() && closeAfterSequence < 0;
        if (ctx.channel().isActive() && ctx.channel().config().isAutoRead() != read) {
            ctx.channel().config().setAutoRead(read);
        }
        closeIfDrained();
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

    private void closeIfDrained() {
        if (draining && waiting.isEmpty() && nextToWrite == nextSequence && ctx.channel().isActive()) {
            ctx.writeAndFlush(ctx.alloc().buffer(0)).addListener(ChannelFutureListener.CLOSE);
        }
    }
}
