package io.sluice.kafka.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.core.SluiceException;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestHeader;

import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One decoded request of one connection and the means to answer it. The handler completes it exactly once, from
 * any thread: the response is encoded there with the generated classes and written by the connection's event loop
 * in request order. A second completion is a bug and throws.
 *
 * <p>Frame bytes the request's data refers to (Produce's records) are valid only until the handler returns: a
 * handler that keeps records longer copies them.
 */
public final class KafkaRequest {
    private final KafkaConnection connection;
    private final long sequence;
    private final RequestHeader header;
    private final AbstractRequest request;
    private final AtomicBoolean completed = new AtomicBoolean();

    KafkaRequest(KafkaConnection connection, long sequence, RequestHeader header, AbstractRequest request) {
        this.connection = connection;
        this.sequence = sequence;
        this.header = header;
        this.request = request;
    }

    public ApiKeys apiKey() {
        return header.apiKey();
    }

    public short version() {
        return header.apiVersion();
    }

    public int correlationId() {
        return header.correlationId();
    }

    public String clientId() {
        return header.clientId();
    }

    /** The generated {@code *RequestData} of this API, e.g. {@code ProduceRequestData}. */
    @SuppressWarnings("unchecked")
    public <T extends ApiMessage> T data() {
        return (T) request.data();
    }

    /** The kafka-clients request wrapper (for its helpers, such as {@code getErrorResponse}). */
    @SuppressWarnings("unchecked")
    public <T extends AbstractRequest> T request() {
        return (T) request;
    }

    public ListenerContext context() {
        return connection.context();
    }

    /** The connection's event loop: the thread that owns the connection's state. */
    public EventExecutor eventLoop() {
        return connection.eventLoop();
    }

    public SocketAddress remoteAddress() {
        return connection.remoteAddress();
    }

    long sequence() {
        return sequence;
    }

    boolean isCompleted() {
        return completed.get();
    }

    /** The connection this request arrived on (its readers, its barrier for back-pressure). */
    KafkaConnection connection() {
        return connection;
    }

    /** Answers with {@code body}, the generated {@code *ResponseData} of this API. Any thread. */
    public void respond(ApiMessage body) {
        respond(body, List.of());
    }

    /**
     * Answers with {@code body} whose non-empty record sets are, in the order they are written, the readable bytes of
     * {@code records}: they travel as their own buffers, not copied into the frame ({@link RecordsFrame}). Takes
     * ownership of {@code records}. Any thread.
     */
    public void respond(ApiMessage body, List<ByteBuf> records) {
        try {
            markCompleted();
        } catch (IllegalStateException e) {
            records.forEach(ByteBuf::release);
            throw e;
        }
        short headerVersion = header.apiKey().responseHeaderVersion(version());
        ByteBuf frame;
        try {
            frame = records.isEmpty() ? encode(connection.alloc(), header.correlationId(), headerVersion, body, version())
                    : RecordsFrame.encode(connection.alloc(), header.correlationId(), headerVersion, body, version(), records);
        } catch (RuntimeException e) {
            // an answer for every request: one left unanswered would hold back every later response (the records,
            // if any, were released)
            connection.internalError(this, e);
            frame = encode(connection.alloc(), header.correlationId(), headerVersion,
                    request.getErrorResponse(0, Errors.UNKNOWN_SERVER_ERROR.exception()).data(), version());
        }
        connection.complete(sequence, frame);
    }

    /** Completes a request that has no response on the wire (Produce with acks=0). Any thread. */
    public void respondNothing() {
        markCompleted();
        connection.complete(sequence, null);
    }

    /** Completes a request that has no response on the wire and closes the connection after it (acks=0 failures). */
    public void respondNothingAndClose() {
        markCompleted();
        connection.completeAndClose(sequence);
    }

    /**
     * Answers with the API's error response for {@code error}: a Kafka {@link ApiException} as is, a
     * {@link SluiceException} as the Kafka error of the same code (Sluice's codes are Kafka's), anything else as
     * UNKNOWN_SERVER_ERROR (logged and counted). Any thread.
     */
    public void fail(Throwable error) {
        Throwable kafka = toKafka(error);
        if (!(kafka instanceof ApiException) || Errors.forException(kafka) == Errors.UNKNOWN_SERVER_ERROR) {
            connection.internalError(this, error);
        }
        context().counters().errorResponses.increment();
        respond(request.getErrorResponse(0, kafka).data());
    }

    /** The Kafka error for a Sluice outcome (Sluice's error codes are Kafka's numbers). */
    public static Errors errorOf(Throwable error) {
        return Errors.forException(toKafka(error));
    }

    private static Throwable toKafka(Throwable error) {
        if (error instanceof SluiceException se) {
            Errors kafka = switch (se.code()) {
                // Sluice's own codes whose numbers mean something else in Kafka
                case BACK_PRESSURED, CLOSED -> Errors.NOT_LEADER_OR_FOLLOWER; // retriable: the client refreshes and retries
                case OFFSET_REGRESSION -> Errors.INVALID_REQUEST;
                case UNKNOWN -> Errors.UNKNOWN_SERVER_ERROR;
                default -> Errors.forCode(se.code().id); // the others are Kafka's numbers
            };
            if (kafka != Errors.UNKNOWN_SERVER_ERROR) {
                return kafka.exception(se.getMessage());
            }
        }
        return error;
    }

    private void markCompleted() {
        if (!completed.compareAndSet(false, true)) {
            throw new IllegalStateException(apiKey() + " request " + correlationId() + " completed twice");
        }
    }

    /**
     * A response frame: int32 length, the response header of {@code headerVersion}, the body at {@code version}.
     * <pre>
     * +--------+----------------+-----------------+
     * | length | correlation id | [tagged fields] |  body ...
     * | int32  | int32          | (header v1)     |
     * +--------+----------------+-----------------+
     * </pre>
     */
    static ByteBuf encode(ByteBufAllocator alloc, int correlationId, short headerVersion, ApiMessage body, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ResponseHeaderData responseHeader = new ResponseHeaderData().setCorrelationId(correlationId);
        int size = responseHeader.size(cache, headerVersion) + body.size(cache, version);
        ByteBuf out = alloc.buffer(4 + size);
        try {
            out.writeInt(size);
            ByteBuffer nio = out.nioBuffer(4, size);
            ByteBufferAccessor writer = new ByteBufferAccessor(nio);
            responseHeader.write(writer, cache, headerVersion);
            body.write(writer, cache, version);
            if (nio.hasRemaining()) {
                throw new IllegalStateException("response of " + size + " bytes wrote " + nio.position());
            }
            if (!out.hasMemoryAddress() && !out.hasArray() && out.nioBufferCount() != 1) {
                throw new IllegalStateException("response buffer is not one region");
            }
            out.writerIndex(4 + size);
            return out;
        } catch (RuntimeException e) {
            out.release();
            throw e;
        }
    }
}
