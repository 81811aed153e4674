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
import io.sluice.records.RecordBatchWriter;

import java.io.DataInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Raw protocol frames for plain-socket clients (see {@code docs/PROTOCOL.md}): what a test needs when a Java client
 * per connection would be too heavy (1,000 connections) or too polite (a fetcher that never reads).
 */
final class WireClient {
    private WireClient() {
    }

    /** A PRODUCE request carrying {@code records} as one record batch. */
    static byte[] produceFrame(int correlationId, Acks acks, String topic, int partition, List<ProducerRecord> records) {
        ByteBuffer batch = ByteBuffer.allocate(1 << 20);
        RecordBatchWriter writer = new RecordBatchWriter();
        writer.begin(batch, 0);
        for (ProducerRecord r : records) {
            writer.append(r.timestamp(), r.key(), r.key() == null ? -1 : r.key().length, r.value(), r.value().length, r.headers());
        }
        int length = writer.finish(0);
        return frame(ApiKey.PRODUCE, Produce.VERSION_BATCH, correlationId,
                out -> Produce.encodeBatch(out, acks, topic, partition, b -> b.writeBytes(batch.array(), 0, length)));
    }

    static byte[] fetchFrame(int correlationId, TopicPartition tp, long offset, int maxBytes, int maxWaitMillis) {
        return frame(ApiKey.FETCH, Fetch.VERSION_BATCHES, correlationId, out -> new Fetch.Request(maxWaitMillis, maxBytes,
                List.of(new Fetch.PartitionRequest(tp, offset, maxBytes))).encode(out));
    }

    private static byte[] frame(ApiKey api, short version, int correlationId, java.util.function.Consumer<ByteBuf> body) {
        ByteBuf out = Unpooled.buffer();
        try {
            int start = Frames.startRequest(out, api, version, correlationId);
            body.accept(out);
            Frames.finish(out, start);
            byte[] bytes = new byte[out.readableBytes()];
            out.readBytes(bytes);
            return bytes;
        } finally {
            out.release();
        }
    }

    /** One response frame: its correlation id, error code, and the offsets of a produce of {@code count} records when the code is 0. */
    record Response(int correlationId, short errorCode, long[] offsets) {
        static Response readProduce(DataInputStream in, int count) throws IOException {
            int length = in.readInt();
            byte[] frame = new byte[length];
            in.readFully(frame);
            ByteBuf buf = Unpooled.wrappedBuffer(frame);
            int correlationId = buf.readInt();
            short code = buf.readShort();
            long[] offsets = new long[0];
            if (code == 0) {
                long base = Produce.BatchResponse.decode(buf).baseOffset();
                offsets = java.util.stream.LongStream.range(base, base + count).toArray();
            }
            return new Response(correlationId, code, offsets);
        }
    }
}
