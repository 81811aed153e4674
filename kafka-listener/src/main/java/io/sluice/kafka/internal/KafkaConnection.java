package io.sluice.kafka.internal;

import io.sluice.core.internal.BrokerFront;
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
import io.sluice.net.protocol.FrameDecoder;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One Kafka connection: decodes each frame's request header, then the generated request of that API and version
 * (over the frame's own buffer), and hands it to the handler of the API's row in {@link KafkaApis}. All state is
 * confined to the connection's event loop (single writer); completions from other threads hop back onto it.
 *
 * <p>Ordering: requests start in arrival order and responses are written in arrival order whatever order they
 * complete in (a ring of response slots indexed by request sequence), as Kafka clients require. A request that must
 * finish before the next may start (a produce waiting for ring space) raises a barrier ({@link #setBarrier}).
 *
 * <p>Back-pressure: the connection stops reading ({@code autoRead=false}) while a barrier is up, while
 * {@code max.inflight.per.connection} requests are unanswered, or while the socket is not writable.
 *
 * <p>Before authentication (when the broker has a token) a connection is held to the binary port's bounds: frames of
 * at most {@code auth.max.frame.bytes} (refused from the length field), only ApiVersions and SASL, {@code
 * auth.timeout.ms} to authenticate, at most {@code max.unauthenticated.connections} at a time. Anything else closes
 * it with a logged reason. Bytes that break the protocol (an unknown API key, a version outside the table, a body
 * the generated classes cannot decode) close the connection too, as Kafka does: no response can be encoded for them.
 */
public final class KafkaConnection extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaConnection.class);

    private final ListenerContext server;
    private final int maxInFlight;
    private final ArrayDeque<ByteBuf> waiting = new ArrayDeque<>();
    /** Finished responses by sequence % maxInFlight; {@link #NO_RESPONSE} for a request answered with nothing. */
    private final ByteBuf[] responses;
    private final boolean[] done;
    private final Map<TopicPartition, PartitionReader> readers = new HashMap<>();
    /** Long-polling fetches: a close or drain answers them at once. Event loop only. */
    final Set<Runnable> waitingFetches = new HashSet<>();
    private ChannelHandlerContext ctx;
    private long nextSequence;
    private long nextToWrite;
    private Object barrier;
    private boolean authenticated;
    private boolean countedUnauthenticated;
    private boolean startingRequests;
    private boolean draining;
    private long closeAfterSequence = -1;
    private ScheduledFuture<?> authDeadline;
    private ScheduledFuture<?> frameCheck;

    public KafkaConnection(ListenerContext server) {
        this.server = server;
        this.maxInFlight = server.server().maxInFlightPerConnection();
        this.responses = new ByteBuf[maxInFlight];
        this.done = new boolean[maxInFlight];
        this.authenticated = !server.authRequired();
    }

    // ---------------------------------------------------------------- what handlers use

    ListenerContext context() {
        return server;
    }

    EventExecutor eventLoop() {
        return ctx.executor();
    }

    ByteBufAllocator alloc() {
        return ctx.alloc();
    }

    SocketAddress remoteAddress() {
        return ctx.channel().remoteAddress();
    }

    boolean isActive() {
        return ctx.channel().isActive();
    }

    boolean isDraining() {
        return draining;
    }

    /** SaslAuthenticate succeeded: lift the pre-authentication bounds. Event loop. */
    void authenticated() {
        authenticated = true;
        leaveUnauthenticated();
        FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
        if (decoder != null) {
            decoder.limit(server.server().maxFrameSize());
        }
    }

    /** SaslAuthenticate failed: answer it, then close (as Kafka does). Event loop. */
    void closeAfter(long sequence) {
        closeAfterSequence = sequence;
    }

    /** Stops starting requests (and reading) until {@link #clearBarrier}. Event loop. */
    void setBarrier(Object owner) {
        barrier = owner;
    }

    void clearBarrier(Object owner) {
        if (barrier == owner) {
            barrier = null;
            startWaiting();
        }
    }

    /** The connection's reader of a partition (opened lazily, closed with the connection). Event loop. */
    PartitionReader reader(TopicPartition tp) {
        PartitionReader reader = readers.get(tp);
        if (reader == null) {
            reader = BrokerFront.of(server.broker()).openReader(tp);
            readers.put(tp, reader);
        }
        return reader;
    }

    /** Drops a reader that failed (a damaged batch, a deleted topic); the next fetch opens a fresh one. */
    void dropReader(TopicPartition tp) {
        PartitionReader reader = readers.remove(tp);
        if (reader != null) {
            reader.close();
        }
    }

    void internalError(KafkaRequest request, Throwable error) {
        server.counters().internalErrors.increment();
        LOG.warn("{} request from {} failed unexpectedly; answered with an error, the connection stays open",
                request.apiKey(), remoteAddress(), error);
    }

    // ---------------------------------------------------------------- connection life

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (!authenticated) {
            FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
            if (decoder != null) {
                decoder.limit(server.server().preAuthFrameLimit());
            }
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        if (!authenticated) {
            KafkaCounters c = server.counters();
            if (c.unauthenticatedConnections.incrementAndGet() > server.server().maxUnauthenticatedConnections()) {
                c.unauthenticatedConnections.decrementAndGet();
                c.unauthenticatedRefused.increment();
                long refused = c.unauthenticatedRefused.sum();
                if (Long.bitCount(refused) == 1) { // 1st, 2nd, 4th...: a connection storm cannot flood the log
                    LOG.warn("refusing Kafka connection from {}: max.unauthenticated.connections={} are open and not "
                            + "authenticated; {} refused so far", ctx.channel().remoteAddress(),
                            server.server().maxUnauthenticatedConnections(), refused);
                }
                ctx.close();
                return;
            }
            countedUnauthenticated = true;
            authDeadline = ctx.executor().schedule(() -> {
                if (!authenticated && ctx.channel().isActive()) {
                    closeUnauthenticated("not authenticated within auth.timeout.ms=" + server.server().authTimeoutMillis());
                }
            }, server.server().authTimeoutMillis(), TimeUnit.MILLISECONDS);
        }
        super.channelActive(ctx);
    }

    private void closeUnauthenticated(String reason) {
        server.counters().unauthenticatedCloses.increment();
        long closes = server.counters().unauthenticatedCloses.sum();
        if (Long.bitCount(closes) == 1) {
            LOG.warn("closing Kafka connection {} before authenticating: {} ({} such closes so far)",
                    ctx.channel().remoteAddress(), reason, closes);
        } else {
            LOG.debug("closing Kafka connection {} before authenticating: {}", ctx.channel().remoteAddress(), reason);
        }
        ctx.close();
    }

    private void leaveUnauthenticated() {
        if (countedUnauthenticated) {
            countedUnauthenticated = false;
            server.counters().unauthenticatedConnections.decrementAndGet();
        }
        if (authDeadline != null) {
            authDeadline.cancel(false);
            authDeadline = null;
        }
    }

    /** Closes a connection whose bytes break the protocol, logging why; nothing of the request was acted on. */
    private void closeForProtocol(String reason) {
        server.counters().protocolErrors.increment();
        if (!authenticated) {
            closeUnauthenticated(reason);
            return;
        }
        long errors = server.counters().protocolErrors.sum();
        if (Long.bitCount(errors) == 1) { // 1st, 2nd, 4th...: a hostile peer cannot flood the log
            LOG.warn("closing Kafka connection {}: {} ({} protocol errors so far)", ctx.channel().remoteAddress(), reason, errors);
        } else {
            LOG.debug("closing Kafka connection {}: {}", ctx.channel().remoteAddress(), reason);
        }
        ctx.close();
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        armFrameCheck();
        super.channelReadComplete(ctx);
    }

    /** Slow-drip defence: a frame that started arriving must complete within frame.timeout.ms. */
    private void armFrameCheck() {
        if (frameCheck != null) {
            return;
        }
        FrameDecoder decoder = ctx.pipeline().get(FrameDecoder.class);
        long age = decoder == null ? 0 : decoder.partialFrameAgeNanos(System.nanoTime());
        if (age > 0) {
            long left = Math.max(0, TimeUnit.MILLISECONDS.toNanos(server.server().frameTimeoutMillis()) - age);
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
                > TimeUnit.MILLISECONDS.toNanos(server.server().frameTimeoutMillis())) {
            closeForProtocol("a frame stayed incomplete for more than frame.timeout.ms=" + server.server().frameTimeoutMillis());
            return;
        }
        armFrameCheck();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            if (nextSequence != nextToWrite || barrier != null) {
                return; // serving a long-poll: busy, not idle
            }
            LOG.info("closing Kafka connection {}: idle for idle.timeout.ms={}", ctx.channel().remoteAddress(),
                    server.server().idleTimeoutMillis());
            ctx.close();
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (root instanceof FrameDecoder.LimitExceededException tooLong && !authenticated) {
            server.counters().protocolErrors.increment();
            closeUnauthenticated("frame of " + tooLong.length() + " bytes announced, auth.max.frame.bytes=" + tooLong.limit());
            return;
        }
        if (root instanceof TooLongFrameException || root instanceof CorruptedFrameException) {
            closeForProtocol("bad frame: " + root.getMessage());
            return;
        }
        if (root instanceof javax.net.ssl.SSLException) {
            LOG.warn("closing Kafka connection {}: TLS failed: {}", ctx.channel().remoteAddress(), root.getMessage());
        } else if (root instanceof IOException) {
            LOG.debug("closing Kafka connection {}: {}", ctx.channel().remoteAddress(), root.toString());
        } else {
            LOG.warn("closing Kafka connection {} after an unexpected error", ctx.channel().remoteAddress(), root);
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
            fetch.run(); // cancels its wake-up; its answer is dropped (the channel is closed)
        }
        for (PartitionReader reader : readers.values()) {
            reader.close();
        }
        readers.clear();
        super.channelInactive(ctx);
    }

    /** Listener shutdown: read nothing more, answer what was received (long-polls at once), then close. Event loop. */
    public void beginDrain() {
        draining = true;
        ctx.channel().config().setAutoRead(false);
        for (Runnable fetch : List.copyOf(waitingFetches)) {
            fetch.run();
        }
        closeIfDrained();
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
        startWaiting();
        super.channelWritabilityChanged(ctx);
    }

    private void startWaiting() {
        if (startingRequests) {
            return; // re-entered from a request that completed synchronously: the loop below goes on
        }
        startingRequests = true;
        try {
            while (barrier == null && !waiting.isEmpty() && nextSequence - nextToWrite < maxInFlight
                    && closeAfterSequence < 0 && ctx.channel().isActive() && ctx.channel().isWritable()) {
                ByteBuf frame = waiting.poll();
                try {
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

    /**
     * Decodes and starts one request. The frame (without its length field):
     * <pre>
     * +---------+-------------+----------------+-------------------------------+------------------+
     * | api key | api version | correlation id | client id, [tagged fields]    | request body ... |
     * | int16   | int16       | int32          | (request header v1 / v2)      |                  |
     * +---------+-------------+----------------+-------------------------------+------------------+
     * </pre>
     */
    private void start(ByteBuf frame) {
        server.counters().requests.increment();
        int at = frame.readerIndex();
        short apiId = frame.getShort(at);
        short version = frame.getShort(at + 2);
        int correlationId = frame.getInt(at + 4);
        KafkaApis.Api api = server.apis().lookup(apiId);
        if (api == null) {
            closeForProtocol("unknown or unsupported api key " + apiId);
            return;
        }
        if (!authenticated && !api.beforeAuth()) {
            server.counters().protocolErrors.increment();
            closeUnauthenticated(api.key() + " before SASL authentication");
            return;
        }
        if (!api.decodes(version)) {
            if (api.key() == ApiKeys.API_VERSIONS && version > api.maxVersion()) {
                // a newer client: answer in the v0 layout, which every client reads, with the versions we have
                long sequence = nextSequence++;
                server.counters().errorResponses.increment();
                ApiVersionsResponseData body = new ApiVersionsResponseData()
                        .setErrorCode(Errors.UNSUPPORTED_VERSION.code())
                        .setApiKeys(server.apis().advertised());
                complete(sequence, KafkaRequest.encode(ctx.alloc(), correlationId, (short) 0, body, (short) 0));
                return;
            }
            closeForProtocol(api.key() + " version " + version + " is not supported (" + api.minVersion() + ".."
                    + api.maxVersion() + ")");
            return;
        }
        RequestHeader header;
        AbstractRequest request;
        try {
            ByteBuffer bytes = frame.nioBuffer();
            ByteBufferAccessor reader = new ByteBufferAccessor(bytes);
            header = new RequestHeader(new RequestHeaderData(reader, api.key().requestHeaderVersion(version)),
                    api.key().requestHeaderVersion(version));
            request = AbstractRequest.parseRequest(api.key(), version, reader).request;
            if (bytes.hasRemaining()) {
                throw new IllegalArgumentException(bytes.remaining() + " bytes after the request body");
            }
        } catch (RuntimeException e) {
            closeForProtocol(api.key() + " v" + version + " request could not be decoded: " + e);
            return;
        }
        KafkaRequest kafkaRequest = new KafkaRequest(this, nextSequence++, header, request);
        try {
            api.handler().handle(kafkaRequest);
        } catch (RuntimeException e) {
            if (!kafkaRequest.isCompleted()) {
                kafkaRequest.fail(e);
            } else {
                internalError(kafkaRequest, e);
            }
        }
    }

    /**
     * Completes request {@code sequence} without a response and closes the connection once every earlier response
     * is written: how an acks=0 producer learns that a produce failed (Kafka does the same). Any thread.
     */
    void completeAndClose(long sequence) {
        if (!ctx.executor().inEventLoop()) {
            ctx.executor().execute(() -> completeAndClose(sequence));
            return;
        }
        if (closeAfterSequence < 0 || sequence < closeAfterSequence) {
            closeAfterSequence = sequence;
        }
        complete(sequence, null);
    }

    /** Completes request {@code sequence} with a response frame (null: nothing to write). Any thread. */
    void complete(long sequence, ByteBuf response) {
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
        startWaiting();
    }

    private void closeIfDrained() {
        if (draining && waiting.isEmpty() && nextToWrite == nextSequence && ctx.channel().isActive()) {
            ctx.writeAndFlush(ctx.alloc().buffer(0)).addListener(ChannelFutureListener.CLOSE);
        }
    }
}
