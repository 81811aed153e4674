package io.sluice.net.server.pipeline;

import io.netty.buffer.ByteBuf;
import io.sluice.core.PartitionReader;

import java.nio.ByteBuffer;

/**
 * Where a fetch copies one partition's stored record batches when they travel apart from the response's fields: pooled
 * chunks spliced into the frame at one position of its fields, in order; {@link #finish} splices the last. A chunk holds
 * whole batches. The first is at most {@value #FIRST_CHUNK} bytes (a fetch at the tail finds a batch or two), each next
 * one twice the last, up to {@link SplitFrame#POOLED_BYTES}, and none larger than what the partition may still add;
 * a batch larger than that gets a chunk of its own size.
 */
public final class ChunkedBatchSink implements PartitionReader.BatchSink {
    static final int FIRST_CHUNK = 64 * 1024;

    private final SplitFrame frame;
    private final int at;
    /** what the partition may still add: the next chunk is no larger (nor smaller than the batch that opens it) */
    private int budget;
    private int bytes;
    private ByteBuf chunk;
    private ByteBufBatchSink sink;
    private int nextChunk = FIRST_CHUNK;

    /** Batches of up to about {@code budget} bytes going at {@code fieldsIndex} of {@code frame}'s fields. */
    public ChunkedBatchSink(SplitFrame frame, int fieldsIndex, int budget) {
        this.frame = frame;
        this.at = fieldsIndex;
        this.budget = budget;
    }

    @Override
    public ByteBuffer claim(int length) {
        if (chunk == null || chunk.writableBytes() < length) {
            ByteBuf next = frame.alloc().directBuffer(Math.max(length, Math.min(Math.max(budget, 0), nextChunk)));
            nextChunk = Math.min(SplitFrame.POOLED_BYTES, 2 * nextChunk);
            flush();
            chunk = next;
            sink = new ByteBufBatchSink(chunk);
        }
        budget -= length;
        bytes += length;
        return sink.claim(length);
    }

    /** Splices the last chunk into the frame; returns the bytes claimed. */
    public int finish() {
        flush();
        return bytes;
    }

    private void flush() {
        if (chunk != null) {
            ByteBuf done = chunk;
            chunk = null;
            sink = null;
            if (done.isReadable()) {
                frame.splice(at, done);
            } else {
                done.release();
            }
        }
    }
}
