package io.sluice.net.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.core.SluiceException;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.Frames;
import io.sluice.net.protocol.Wire;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A plain blocking socket speaking the binary protocol one request at a time, at any API version: what the Java
 * client cannot send (an older version, a hand-made body).
 */
public final class RawClient implements AutoCloseable {
    private final Socket socket;
    private final DataOutputStream out;
    private final DataInputStream in;
    private int correlationId;

    public RawClient(String bootstrap) throws IOException {
        String[] hostPort = bootstrap.split(":");
        socket = new Socket(hostPort[0], Integer.parseInt(hostPort[1]));
        socket.setSoTimeout(10_000);
        out = new DataOutputStream(socket.getOutputStream());
        in = new DataInputStream(socket.getInputStream());
    }

    /** Sends one request and returns its response body; an error frame becomes the typed exception it names. */
    public ByteBuf call(ApiKey api, short version, Consumer<ByteBuf> body) throws IOException {
        ByteBuf frame = Unpooled.buffer();
        int cid = ++correlationId;
        int start = Frames.startRequest(frame, api, version, cid);
        body.accept(frame);
        Frames.finish(frame, start);
        byte[] bytes = new byte[frame.readableBytes()];
        frame.readBytes(bytes);
        out.write(bytes);
        out.flush();
        byte[] response = new byte[in.readInt()];
        in.readFully(response);
        ByteBuf answer = Unpooled.wrappedBuffer(response);
        assertThat(answer.readInt()).isEqualTo(cid);
        short code = answer.readShort();
        if (code != SluiceException.Code.NONE.id) {
            throw SluiceException.fromCode(SluiceException.Code.of(code), Wire.readString(answer));
        }
        return answer;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
