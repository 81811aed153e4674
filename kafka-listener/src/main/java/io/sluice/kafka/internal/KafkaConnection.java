package io.sluice.kafka.internal;

import io.netty.buffer.ByteBuf;
import io.sluice.net.server.pipeline.PipelinedConnection;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;

/**
 * One Kafka connection: decodes each frame's request header, then the generated request of that API and version
 * (over the frame's own buffer), and hands it to the handler of the API's row in {@link KafkaApis}. The ordering
 * Kafka clients require (responses written in request order, whatever order they complete in), back-pressure, the
 * pre-authentication bounds, the slow-drip and idle checks are {@link PipelinedConnection}'s, shared with the binary
 * port; what is this port's own:
 *
 * <p>Before SASL authentication only the APIs marked {@code beforeAuth} in {@link KafkaApis} (ApiVersions, the SASL
 * pair) are accepted; anything else closes the connection. Bytes that break the protocol (an unknown API key, a
 * version outside the table, a body the generated classes cannot decode) close the connection too, as Kafka does: no
 * response can be encoded for them. An ApiVersions request newer than the table is answered in the v0 layout.
 */
public final class KafkaConnection extends PipelinedConnection {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaConnection.class);

    private final ListenerContext server;

    public KafkaConnection(ListenerContext server) {
        super(server.server(), server.counters(), server.front(), server.authRequired(), "Kafka connection");
        this.server = server;
    }

    ListenerContext context() {
        return server;
    }

    void internalError(KafkaRequest request, Throwable error) {
        server.counters().internalErrors.increment();
        LOG.warn("{} request from {} failed unexpectedly; answered with an error, the connection stays open",
                request.apiKey(), remoteAddress(), error);
    }

    // ---------------------------------------------------------------- request flow

    /**
     * Decodes and starts one request. The frame (without its length field):
     * <pre>
     * +---------+-------------+----------------+-------------------------------+------------------+
     * | api key | api version | correlation id | client id, [tagged fields]    | request body ... |
     * | int16   | int16       | int32          | (request header v1 / v2)      |                  |
     * +---------+-------------+----------------+-------------------------------+------------------+
     * </pre>
     */
    @Override
    protected void start(ByteBuf frame) {
        int at = frame.readerIndex();
        short apiId = frame.getShort(at);
        short version = frame.getShort(at + 2);
        int correlationId = frame.getInt(at + 4);
        KafkaApis.Api api = server.apis().lookup(apiId);
        if (api == null) {
            closeForProtocol("unknown or unsupported api key " + apiId);
            return;
        }
        if (!isAuthenticated() && !api.beforeAuth()) {
            server.counters().protocolErrors.increment();
            closeUnauthenticated(api.key() + " before SASL authentication");
            return;
        }
        if (!api.decodes(version)) {
            if (api.key() == ApiKeys.API_VERSIONS && version > api.maxVersion()) {
                // a newer client: answer in the v0 layout, which every client reads, with the versions we have
                long sequence = nextSequence();
                server.counters().errorResponses.increment();
                ApiVersionsResponseData body = new ApiVersionsResponseData()
                        .setErrorCode(Errors.UNSUPPORTED_VERSION.code())
                        .setApiKeys(server.apis().advertised());
                complete(sequence, KafkaRequest.encode(alloc(), correlationId, (short) 0, body, (short) 0));
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
        KafkaRequest kafkaRequest = new KafkaRequest(this, nextSequence(), header, request);
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
}
