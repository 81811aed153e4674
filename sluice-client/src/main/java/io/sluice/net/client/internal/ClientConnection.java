package io.sluice.net.client.internal;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.sluice.core.SluiceException;
import io.sluice.net.client.ClientConfig;
import io.sluice.net.internal.Transport;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.Authenticate;
import io.sluice.net.protocol.FrameDecoder;
import io.sluice.net.protocol.Frames;
import io.sluice.net.protocol.ProtocolException;
import io.sluice.net.protocol.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One TCP connection to a broker. Requests are pipelined; responses arrive in request order, so the pending
 * requests are a FIFO (confined to the event loop) checked against each response's correlation id. When the
 * connection is lost every pending request fails with {@link SluiceException.ClosedException}.
 */
public final class ClientConnection implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ClientConnection.class);

    private record Pending(int correlationId, ResponseSink sink) {
    }

    private final Channel channel;
    private final String peer;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private int nextCorrelationId;
    private volatile SluiceException closeCause;

    private ClientConnection(Channel channel, String peer) {
        this.channel = channel;
        this.peer = peer;
    }

    /**
     * Connects (and authenticates when the config has a token), blocking up to {@code connectTimeoutMillis}.
     *
     * @throws SluiceException.ClosedException when the broker cannot be reached
     */
    public static ClientConnection connect(ClientConfig config, EventLoopGroup group, Transport transport) {
        InetSocketAddress address = config.address();
        String peer = address.getHostString() + ":" + address.getPort();
        ClientConnection[] holder = new ClientConnection[1];
        Bootstrap bootstrap = new Bootstrap()
                .group(group)
                .channel(transport.socketChannel())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, config.connectTimeoutMillis()))
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (config.sslContext() != null) {
                            ch.pipeline().addLast("tls", config.sslContext().newHandler(ch.alloc(), address.getHostString(), address.getPort()));
                        }
                        ch.pipeline().addLast("frames", FrameDecoder.forResponses(config.maxFrameSize()));
                        ch.pipeline().addLast("responses", new ResponseHandler(holder));
                    }
                });
        ChannelFuture connected = bootstrap.connect(new InetSocketAddress(address.getHostString(), address.getPort()));
        if (!connected.awaitUninterruptibly(config.connectTimeoutMillis() + 100, TimeUnit.MILLISECONDS) || !connected.isSuccess()) {
            connected.channel().close();
            Throwable cause = connected.cause();
            throw new SluiceException.ClosedException("cannot connect to broker " + peer + ": "
                    + (cause == null ? "timed out after " + config.connectTimeoutMillis() + " ms" : cause.getMessage()));
        }
        ClientConnection connection = new ClientConnection(connected.channel(), peer);
        holder[0] = connection;
        if (config.authToken() != null) {
            Authenticate.Request auth = new Authenticate.Request(config.authToken());
            try {
                connection.request(ApiKey.AUTHENTICATE, auth::encode, body -> Boolean.TRUE)
                        .get(config.connectTimeoutMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException | ExecutionException | TimeoutException e) {
                connection.close();
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
                if (cause instanceof SluiceException se) {
                    throw se;
                }
                throw new SluiceException(SluiceException.Code.AUTHENTICATION_FAILED, "authentication with " + peer + " failed: " + cause);
            }
        }
        return connection;
    }

    public boolean isActive() {
        return channel.isActive();
    }

    public EventLoop eventLoop() {
        return channel.eventLoop();
    }

    public String peer() {
        return peer;
    }

    /** Sends a request from any thread; the future completes on the event loop. */
    public <T> CompletableFuture<T> request(ApiKey api, Consumer<ByteBuf> body, Function<ByteBuf, T> decoder) {
        CompletableFuture<T> future = new CompletableFuture<>();
        ResponseSink sink = new ResponseSink() {
            @Override
            public void onResponse(ByteBuf in) {
                try {
                    future.complete(decoder.apply(in));
                } catch (RuntimeException e) {
                    future.completeExceptionally(e);
                }
            }

            @Override
            public void onError(SluiceException error) {
                future.completeExceptionally(error);
            }
        };
        if (channel.eventLoop().inEventLoop()) {
            write(api, body, sink);
            flush();
        } else {
            channel.eventLoop().execute(() -> {
                write(api, body, sink);
                flush();
            });
        }
        return future;
    }

    /** Blocking request, bounded by {@code timeoutMillis}; rethrows the broker's typed error. */
    public <T> T call(ApiKey api, Consumer<ByteBuf> body, Function<ByteBuf, T> decoder, long timeoutMillis) {
        CompletableFuture<T> future = request(api, body, decoder);
        try {
            return future.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SluiceException(SluiceException.Code.TIMEOUT, api + " interrupted");
        } catch (TimeoutException e) {
            throw new SluiceException(SluiceException.Code.TIMEOUT, api + " to " + peer + " got no answer within " + timeoutMillis + " ms");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof SluiceException se) {
                throw se;
            }
            throw new SluiceException(SluiceException.Code.UNKNOWN, api + " failed: " + e.getCause(), e.getCause());
        }
    }

    /**
     * Event loop only: encodes and writes (without flushing) one request. If the connection is already closed the
     * sink fails at once.
     */
    public void write(ApiKey api, Consumer<ByteBuf> body, ResponseSink sink) {
        write(api, body, sink, 256);
    }

    /** As {@link #write(ApiKey, Consumer, ResponseSink)}, allocating {@code sizeHint} bytes up front (no regrowth). */
    public void write(ApiKey api, Consumer<ByteBuf> body, ResponseSink sink, int sizeHint) {
        if (!channel.isActive()) {
            sink.onError(closedError());
            return;
        }
        int correlationId = nextCorrelationId++;
        ByteBuf out = channel.alloc().ioBuffer(sizeHint);
        try {
            int start = Frames.startRequest(out, api, api.maxVersion, correlationId);
            body.accept(out);
            Frames.finish(out, start);
        } catch (RuntimeException e) {
            out.release();
            throw e;
        }
        pending.add(new Pending(correlationId, sink));
        channel.write(out, channel.voidPromise());
    }

    public void flush() {
        channel.flush();
    }

    @Override
    public void close() {
        channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    private SluiceException closedError() {
        SluiceException cause = closeCause;
        return cause != null ? cause : new SluiceException.ClosedException("connection to broker " + peer + " is closed");
    }

    private void onFrame(ByteBuf frame) {
        int correlationId = frame.readInt();
        short code = frame.readShort();
        Pending head = pending.poll();
        if (head == null || head.correlationId() != correlationId) {
            throw new ProtocolException("response with correlation id " + correlationId + " does not match the oldest request "
                    + (head == null ? "(none)" : head.correlationId()));
        }
        if (code == SluiceException.Code.NONE.id) {
            head.sink().onResponse(frame);
        } else {
            String message = Wire.readString(frame);
            head.sink().onError(SluiceException.fromCode(SluiceException.Code.of(code), message));
        }
    }

    private void failPending(SluiceException error) {
        Pending p;
        while ((p = pending.poll()) != null) {
            try {
                p.sink().onError(error);
            } catch (RuntimeException e) {
                LOG.warn("response callback failed", e);
            }
        }
    }

    /** Pipeline end: dispatches frames and fails everything pending when the connection goes away. */
    private static final class ResponseHandler extends ChannelInboundHandlerAdapter {
        private final ClientConnection[] holder;

        ResponseHandler(ClientConnection[] holder) {
            this.holder = holder;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            try {
                holder[0].onFrame(frame);
            } finally {
                frame.release();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ClientConnection c = holder[0];
            String peer = c == null ? String.valueOf(ctx.channel().remoteAddress()) : c.peer;
            LOG.warn("closing connection to broker {}: {}", peer, cause.toString());
            if (c != null && c.closeCause == null) {
                c.closeCause = new SluiceException.ClosedException("connection to broker " + peer + " failed: " + cause.getMessage());
            }
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            ClientConnection c = holder[0];
            if (c != null) {
                c.failPending(c.closedError());
            }
            super.channelInactive(ctx);
        }
    }
}
