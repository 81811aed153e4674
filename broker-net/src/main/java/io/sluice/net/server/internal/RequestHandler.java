package io.sluice.net.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.FastThreadLocal;
import io.sluice.core.SluiceException;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.Frames;
import io.sluice.net.protocol.ProtocolException;
import io.sluice.net.server.pipeline.PipelinedConnection;
import io.sluice.net.server.pipeline.SplitFrame;
import io.sluice.records.RecordBatchChecker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * One connection of the binary port: decodes each request's fixed header and dispatches it ({@link Requests}). The
 * ordering, back-pressure, pre-authentication bounds, slow-drip and idle checks are {@link PipelinedConnection}'s,
 * shared with the Kafka listener; what is this port's own:
 *
 * <p>Before authentication (when a token is configured) only API_VERSIONS and AUTHENTICATE are accepted; anything
 * else, or an unknown API key, is answered and then the connection is closed, counted in
 * {@code ServerStats.unauthenticatedCloses}.
 *
 * <p>An unknown API key or version is answered {@code UNSUPPORTED_VERSION} and the connection stays open. A request
 * whose operation fails unexpectedly (anything but a {@link SluiceException}, on any thread) is answered
 * {@code UNKNOWN} and the connection stays usable: no request is left without an answer, which would hold back every
 * later response on the connection.
 */
public final class RequestHandler extends PipelinedConnection {
    private static final Logger LOG = LoggerFactory.getLogger(RequestHandler.class);

    final ServerContext server;
    /** Checks PRODUCE batches: one per event-loop thread (it is reusable and single-threaded), not per connection. */
    private static final FastThreadLocal<RecordBatchChecker> BATCH_CHECKER = new FastThreadLocal<>() {
        @Override
        protected RecordBatchChecker initialValue() {
            return new RecordBatchChecker();
        }
    };

    public RequestHandler(ServerContext server) {
        super(server.config, server.counters, server.front, server.authRequired(), "connection");
        this.server = server;
    }

    // ---------------------------------------------------------------- request flow

    @Override
    protected void start(ByteBuf frame) {
        long sequence = nextSequence();
        short apiId = frame.readShort();
        short version = frame.readShort();
        int correlationId = frame.readInt();
        ApiKey api = ApiKey.of(apiId);
        try {
            if (api == null) {
                if (!isAuthenticated()) {
                    closeUnauthenticatedAfter(sequence, "unknown api key " + apiId);
                }
                fail(sequence, correlationId, SluiceException.Code.UNSUPPORTED_VERSION, "unknown api key " + apiId);
            } else if (!api.supports(version)) {
                fail(sequence, correlationId, SluiceException.Code.UNSUPPORTED_VERSION,
                        api + " version " + version + " is not supported (supported: " + api.minVersion + ".." + api.maxVersion + ")");
            } else if (!isAuthenticated() && api != ApiKey.API_VERSIONS && api != ApiKey.AUTHENTICATE) {
                closeUnauthenticatedAfter(sequence, api + " request (only API_VERSIONS and AUTHENTICATE are accepted)");
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
            LOG.warn("{} request from {} failed", api, remoteAddress(), e);
            fail(sequence, correlationId, SluiceException.Code.UNKNOWN, e.toString());
        }
    }

    // ---------------------------------------------------------------- used by the request implementations

    /** The PRODUCE batch checker of this event loop's thread. */
    RecordBatchChecker batchChecker() {
        return BATCH_CHECKER.get();
    }

    void authenticated(boolean ok, long sequence) {
        if (ok) {
            authenticated();
        } else if (!isAuthenticated()) {
            closeUnauthenticatedAfter(sequence, "authentication failed (wrong token)");
        } else {
            LOG.warn("closing connection {}: authentication failed", remoteAddress());
            closeAfter(sequence);
        }
    }

    /** Builds a success response with {@code body} and completes the request. Any thread. */
    void succeed(long sequence, int correlationId, Consumer<ByteBuf> body) {
        succeed(sequence, correlationId, body, 256);
    }

    /** As {@link #succeed(long, int, Consumer)}, allocating {@code sizeHint} bytes up front. */
    void succeed(long sequence, int correlationId, Consumer<ByteBuf> body, int sizeHint) {
        ByteBuf out = alloc().ioBuffer(sizeHint);
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

    /**
     * As {@link #succeed(long, int, Consumer, int)} for a response whose record bytes travel apart from its fields:
     * {@code body} writes the fields into the buffer and splices the records into the {@link SplitFrame} at positions of
     * it; the frame's length counts both.
     */
    void succeedSplit(long sequence, int correlationId, BiConsumer<ByteBuf, SplitFrame> body, int fieldsSizeHint) {
        ByteBuf out = alloc().ioBuffer(fieldsSizeHint);
        SplitFrame parts = new SplitFrame(alloc());
        ByteBuf frame;
        try {
            int start = Frames.startResponse(out, correlationId);
            body.accept(out, parts);
            out.setInt(start, out.writerIndex() - start - Frames.LENGTH_FIELD_SIZE + parts.splicedBytes());
        } catch (RuntimeException | Error e) {
            out.release();
            parts.release();
            fail(sequence, correlationId, e);
            if (e instanceof VirtualMachineError fatal) {
                throw fatal;
            }
            return;
        }
        try {
            frame = parts.assemble(out); // frees the fields and the parts if it fails
        } catch (RuntimeException e) {
            fail(sequence, correlationId, e);
            return;
        }
        complete(sequence, frame);
    }

    void fail(long sequence, int correlationId, SluiceException.Code code, String message) {
        server.counters.errorResponses.increment();
        ByteBuf out = alloc().ioBuffer(64);
        Frames.writeError(out, correlationId, code, message);
        complete(sequence, out);
    }

    void fail(long sequence, int correlationId, Throwable error) {
        if (error instanceof SluiceException se) {
            fail(sequence, correlationId, se.code(), se.getMessage());
        } else {
            server.counters.internalErrors.increment();
            LOG.warn("request from {} failed unexpectedly; answered UNKNOWN, the connection stays open",
                    remoteAddress(), error);
            fail(sequence, correlationId, SluiceException.Code.UNKNOWN, "internal error: " + error);
        }
    }
}
