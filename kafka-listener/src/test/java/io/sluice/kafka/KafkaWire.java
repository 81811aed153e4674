package io.sluice.kafka;

import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.AbstractResponse;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;

/** A bare Kafka connection for protocol tests: writes requests with the generated classes, reads responses. */
final class KafkaWire implements AutoCloseable {
    final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private int correlationId;

    KafkaWire(int port) throws IOException {
        this.socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(10_000);
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** Sends {@code body} as {@code api} v{@code version} and returns the decoded response. */
    AbstractResponse call(ApiKeys api, short version, ApiMessage body) throws IOException {
        int id = ++correlationId;
        short headerVersion = api.requestHeaderVersion(version);
        RequestHeaderData header = new RequestHeaderData().setRequestApiKey(api.id).setRequestApiVersion(version)
                .setCorrelationId(id).setClientId("wire-test");
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = header.size(cache, headerVersion) + body.size(cache, version);
        ByteBuffer frame = ByteBuffer.allocate(4 + size).putInt(size);
        ByteBufferAccessor writer = new ByteBufferAccessor(frame);
        header.write(writer, cache, headerVersion);
        body.write(writer, cache, version);
        sendRaw(frame.array());
        ByteBuffer response = ByteBuffer.wrap(receive());
        ResponseHeaderData responseHeader = new ResponseHeaderData(new ByteBufferAccessor(response), api.responseHeaderVersion(version));
        if (responseHeader.correlationId() != id) {
            throw new IllegalStateException("correlation id " + responseHeader.correlationId() + ", expected " + id);
        }
        return AbstractResponse.parseResponse(api, new ByteBufferAccessor(response), version);
    }

    void sendRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    byte[] receive() throws IOException {
        byte[] response = new byte[in.readInt()];
        in.readFully(response);
        return response;
    }

    /** True once the server closed the connection (reads end of stream), waiting up to the socket timeout. */
    boolean closedByServer() {
        try {
            while (true) {
                if (in.read() < 0) {
                    return true;
                }
            }
        } catch (IOException e) {
            return e instanceof java.net.SocketException;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
