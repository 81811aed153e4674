package io.sluice.net.reliability;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.core.Acks;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicPartition;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.Fetch;
import io.sluice.net.protocol.Frames;
import io.sluice.net.protocol.Produce;

import java.io.DataInputStream;
import java.io.IOException;
import java.util.List;

/**
 * Raw protocol frames for plain-socket clients (see {@code docs/PROTOCOL.md}): what a test needs when a Java client
 * per connection would be too heavy (1,000 connections) or too polite (a fetcher that never reads).
 */
final class WireClient {
    private WireClient() {
    }

    static byte[] produceFrame(int correlationId, Acks acks, String topic, int partition, List<ProducerRecord> records) {
        return frame(ApiKey.PRODUCE, correlationId, out -> new Produce.Request(acks, topic, partition, records).encode(out));
    }

    static byte[] fetchFrame(int correlationId, TopicPartition tp, long offset, int maxBytes, int maxWaitMillis) {
        return frame(ApiKey.FETCH, correlationId, out -> new Fetch.Request(maxWaitMillis, maxBytes,
                List.of(new Fetch.PartitionRequest(tp, offset, maxBytes))).encode(out));
    }

    private static byte[] frame(ApiKey api, int correlationId, java.util.function.Consumer<ByteBuf> body) {
        ByteBuf out = Unpooled.buffer();
        try {
            int start = Frames.startRequest(out, api, (short) 0, correlationId);
            body.accept(out);
            Frames.finish(out, start);
            byte[] bytes = new byte[out.readableBytes()];
            out.readBytes(bytes);
            return bytes;
        } finally {
            out.release();
        }
    }

    /** One response frame: its correlation id, error code, and body (offsets of a produce when the code is 0). */
    record Response(int correlationId, short errorCode, long[] offsets) {
        static Response readProduce(DataInputStream in) throws IOException {
            int length = in.readInt();
            byte[] frame = new byte[length];
            in.readFully(frame);
            ByteBuf buf = Unpooled.wrappedBuffer(frame);
            int correlationId = buf.readInt();
            short code = buf.readShort();
            long[] offsets = code == 0 ? Produce.Response.decode(buf).offsets() : new long[0];
            return new Response(correlationId, code, offsets);
        }
    }
}
