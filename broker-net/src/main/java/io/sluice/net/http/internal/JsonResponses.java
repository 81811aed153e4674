package io.sluice.net.http.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeadersFactory;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.sluice.core.SluiceException;

import java.io.IOException;
import java.io.UncheckedIOException;

/** Builds JSON responses with Jackson's streaming generator, straight into a pooled buffer. */
public final class JsonResponses {
    private static final JsonFactory JSON = new JsonFactory();

    private JsonResponses() {
    }

    /** Writes the body of a JSON response. */
    @FunctionalInterface
    public interface Body {
        void write(JsonGenerator json) throws IOException;
    }

    public static FullHttpResponse json(ByteBufAllocator alloc, HttpResponseStatus status, Body body) {
        ByteBuf buf = alloc.buffer(256);
        try (ByteBufOutputStream out = new ByteBufOutputStream(buf);
             JsonGenerator json = JSON.createGenerator((java.io.OutputStream) out)) {
            body.write(json);
        } catch (IOException | RuntimeException e) {
            buf.release();
            throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
        }
        buf.writeByte('\n');
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, buf);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json");
        return response;
    }

    /**
     * A JSON response around a body already written, with headers that skip Netty's per-value validation (every
     * header set on it, here and in the API handler's send, is a constant or a number) and no trailer table (a
     * response with a content length has no trailers).
     */
    static FullHttpResponse constantHeaders(HttpResponseStatus status, ByteBuf body) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body,
                TRUSTED.newHeaders(), EmptyHttpHeaders.INSTANCE);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
        return response;
    }

    private static final HttpHeadersFactory TRUSTED = DefaultHttpHeadersFactory.headersFactory().withValidation(false);

    /**
     * An error: {@code {"code":"UNKNOWN_TOPIC","message":"...","line":3}}. Codes are the names of
     * {@link SluiceException.Code}, shared with the binary protocol; {@code line} only for NDJSON body errors.
     */
    public static FullHttpResponse error(ByteBufAllocator alloc, HttpResponseStatus status, SluiceException.Code code,
                                         String message, int line) {
        return json(alloc, status, json -> {
            json.writeStartObject();
            json.writeStringField("code", code.name());
            json.writeStringField("message", message);
            if (line > 0) {
                json.writeNumberField("line", line);
            }
            json.writeEndObject();
        });
    }

    public static FullHttpResponse error(ByteBufAllocator alloc, HttpResponseStatus status, SluiceException.Code code, String message) {
        return error(alloc, status, code, message, 0);
    }

    /** The HTTP status for a typed broker error. */
    public static HttpResponseStatus statusOf(SluiceException.Code code) {
        return switch (code) {
            case UNKNOWN_TOPIC, GROUP_NOT_FOUND -> HttpResponseStatus.NOT_FOUND;
            case TOPIC_EXISTS, NON_EMPTY_GROUP -> HttpResponseStatus.CONFLICT;
            case RECORD_TOO_LARGE -> HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE;
            case INVALID_CONFIG, INVALID_REQUEST -> HttpResponseStatus.BAD_REQUEST;
            case AUTHENTICATION_FAILED -> HttpResponseStatus.UNAUTHORIZED;
            case BACK_PRESSURED, CLOSED -> HttpResponseStatus.SERVICE_UNAVAILABLE;
            case TIMEOUT -> HttpResponseStatus.GATEWAY_TIMEOUT;
            default -> HttpResponseStatus.INTERNAL_SERVER_ERROR;
        };
    }
}
