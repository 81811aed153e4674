package io.sluice.net.client.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.core.SluiceException;
import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.net.client.ClientConfig;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.Authenticate;
import io.sluice.net.protocol.Frames;
import io.sluice.net.protocol.Wire;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One TCP connection with no I/O thread: the calling thread writes its request and reads the answer itself, one
 * request at a time (a blocking {@link Socket}, {@code TCP_NODELAY}). A round trip is then one write and one read
 * on the caller's thread, as a plain-socket echo's client does, instead of two hand-offs through an event loop.
 *
 * <p>The socket has no read timeout: a timed JDK socket read is three system calls (a non-blocking read that finds
 * nothing, a {@code poll}, the read again) where an untimed one is a single blocking read. Each call publishes its
 * deadline instead, and {@link CallDeadlines}' thread closes the socket of a call that passed it; the call then
 * fails with {@code TIMEOUT}. The deadline covers the whole call, the write included.
 *
 * <p>Not thread-safe: its owner serialises calls. Any I/O error, timeout or malformed answer closes the connection
 * (the request stream and the answers would no longer line up); the owner connects again for its next call.
 */
public final class BlockingConnection implements AutoCloseable {
    /** {@link #deadline} when no call is in flight. */
    private static final long NO_CALL = 0;
    private static final VarHandle DEADLINE;

    static {
        try {
            DEADLINE = MethodHandles.lookup().findVarHandle(BlockingConnection.class, "deadline", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final String peer;
    private final int maxFrameSize;
    private final long connectTimeoutMillis;
    private final long requestTimeoutMillis;
    /** When the call in flight must have its answer ({@code System.nanoTime()}), or {@link #NO_CALL}. */
    private volatile long deadline = NO_CALL;
    /** Set by {@link CallDeadlines}' thread before it closes the socket of a late call. */
    private volatile boolean expired;
    /** The request being written (heap: one array written in one call), reused. */
    private final ByteBuf request = Unpooled.buffer(1024);
    /** The answer being read, reused; grows up to {@code maxFrameSize}. */
    private byte[] response = new byte[1024];
    /** {@link #response} as a buffer for the decoders, replaced only when the array grows. */
    private ByteBuf responseView = Unpooled.wrappedBuffer(response);
    private int nextCorrelationId;
    private boolean closed;

    private BlockingConnection(Socket socket, String peer, ClientConfig config) throws IOException {
        this.socket = socket;
        this.peer = peer;
        this.maxFrameSize = config.maxFrameSize();
        this.connectTimeoutMillis = config.connectTimeoutMillis();
        this.requestTimeoutMillis = config.requestTimeoutMillis();
        this.in = new BufferedInputStream(socket.getInputStream(), 64 * 1024);
        this.out = socket.getOutputStream();
    }

    /**
     * Connects and authenticates (when the config has a token), blocking up to {@code connectTimeoutMillis} for each.
     *
     * @throws InvalidConfigException          when the config asks for TLS (this connection speaks plaintext only)
     * @throws SluiceException.ClosedException when the broker cannot be reached
     */
    public static BlockingConnection connect(ClientConfig config) {
        if (config.sslContext() != null) {
            throw InvalidConfigException.of("sslContext", "set", "a caller-thread connection speaks plaintext only; use RemoteProducer for TLS");
        }
        InetSocketAddress address = config.address();
        String peer = address.getHostString() + ":" + address.getPort();
        Socket socket = new Socket();
        BlockingConnection connection;
        try {
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress(address.getHostString(), address.getPort()),
                    millis(config.connectTimeoutMillis()));
            connection = new BlockingConnection(socket, peer, config);
        } catch (IOException e) {
            closeQuietly(socket);
            throw new SluiceException.ClosedException("cannot connect to broker " + peer + ": " + e.getMessage());
        }
        CallDeadlines.SHARED.watch(connection);
        if (config.authToken() != null) {
            Authenticate.Request auth = new Authenticate.Request(config.authToken());
            try {
                connection.call(ApiKey.AUTHENTICATE, auth::encode, body -> Boolean.TRUE, config.connectTimeoutMillis());
            } catch (RuntimeException e) {
                connection.close();
                throw e;
            }
        }
        return connection;
    }

    public boolean isOpen() {
        return !closed && !expired;
    }

    /**
     * One request and its answer, on the calling thread, within {@code requestTimeoutMillis} (writing the request
     * and reading the whole answer).
     *
     * @throws SluiceException                 the broker's typed error for this request (the connection stays open)
     * @throws SluiceException.ClosedException when the connection is closed or fails (the request may or may not
     *                                         have been applied)
     */
    public <T> T call(ApiKey api, Consumer<ByteBuf> body, Function<ByteBuf, T> decoder) {
        return call(api, body, decoder, requestTimeoutMillis);
    }

    private <T> T call(ApiKey api, Consumer<ByteBuf> body, Function<ByteBuf, T> decoder, long timeoutMillis) {
        if (!isOpen()) {
            throw new SluiceException.ClosedException("connection to broker " + peer + " is closed");
        }
        int correlationId = nextCorrelationId++;
        ByteBuf req = request.clear();
        int start = Frames.startRequest(req, api, api.maxVersion, correlationId);
        body.accept(req);
        Frames.finish(req, start);
        int length;
        long due = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        deadline = due == NO_CALL ? 1 : due;
        try {
            out.write(req.array(), req.arrayOffset() + req.readerIndex(), req.readableBytes());
            length = readInt();
            if (length < Frames.RESPONSE_HEADER_SIZE || length > maxFrameSize) {
                throw fail(new SluiceException(SluiceException.Code.INVALID_REQUEST, api + " answer from " + peer + ": frame of "
                        + length + " bytes (at most maxFrameSize=" + maxFrameSize + ")"));
            }
            if (length > response.length) {
                response = new byte[Math.min(maxFrameSize, Math.max(length, response.length * 2))];
                responseView = Unpooled.wrappedBuffer(response);
            }
            readFully(response, length);
        } catch (IOException e) {
            if (expired) {
                throw fail(new SluiceException(SluiceException.Code.TIMEOUT, api + " to " + peer + " got no answer within "
                        + timeoutMillis + " ms; connection closed (the request may or may not have been applied)"));
            }
            throw fail(new SluiceException.ClosedException("connection to broker " + peer + " failed: " + e.getMessage()
                    + " (the request may or may not have been applied)"));
        } finally {
            deadline = NO_CALL;
        }
        ByteBuf frame = responseView.setIndex(0, length);
        int answered = frame.readInt();
        short code = frame.readShort();
        if (answered != correlationId) {
            throw fail(new SluiceException(SluiceException.Code.INVALID_REQUEST, api + " answer from " + peer
                    + " has correlation id " + answered + ", expected " + correlationId));
        }
        if (code != SluiceException.Code.NONE.id) {
            throw SluiceException.fromCode(SluiceException.Code.of(code), Wire.readString(frame));
        }
        return decoder.apply(frame);
    }

    private SluiceException fail(SluiceException error) {
        close();
        return error;
    }

    private int readInt() throws IOException {
        int b0 = in.read();
        int b1 = in.read();
        int b2 = in.read();
        int b3 = in.read();
        if ((b0 | b1 | b2 | b3) < 0) {
            throw new EOFException("broker closed the connection");
        }
        return (b0 << 24) | (b1 << 16) | (b2 << 8) | b3;
    }

    private void readFully(byte[] into, int length) throws IOException {
        int n = 0;
        while (n < length) {
            int r = in.read(into, n, length - n);
            if (r < 0) {
                throw new EOFException("broker closed the connection after " + n + " of " + length + " bytes");
            }
            n += r;
        }
    }

    /**
     * Called by {@link CallDeadlines}' thread: closes the socket when the call in flight has passed its deadline, which
     * fails its blocked read or write. The compare-and-set makes sure it is still that call.
     */
    void expireIfLate(long now) {
        long d = deadline;
        if (d != NO_CALL && now - d >= 0 && DEADLINE.compareAndSet(this, d, NO_CALL)) {
            expired = true;
            closeQuietly(socket);
        }
    }

    /** The shortest of this connection's timeouts: {@link CallDeadlines} checks it at least ten times as often. */
    long shortestTimeoutNanos() {
        return TimeUnit.MILLISECONDS.toNanos(Math.min(connectTimeoutMillis, requestTimeoutMillis));
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            CallDeadlines.SHARED.forget(this);
            closeQuietly(socket);
        }
    }

    private static int millis(long millis) {
        return (int) Math.min(Integer.MAX_VALUE, millis);
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing: nothing left to report
        }
    }
}
