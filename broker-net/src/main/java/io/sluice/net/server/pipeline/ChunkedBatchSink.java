package io.sluice.net.server.pipeline;

import io.netty.buffer.ByteBuf;
import io.sluice.core.PartitionReader;

import java.nio.ByteBuffer;

/**
 * Where a fetch copies one partition's stored record batches. While the response's fields buffer stays within
 * {@value #INLINE_BYTES} bytes, a batch goes into it, after the partition's header (a small response stays one pooled
 * buffer, written with one system call). Past that, the partition's batches go into pooled chunks spliced into the
 * frame at the end of its fields so far ({@link SplitFrame}), in order; {@link #finish} splices the last. A chunk holds
 * whole batches: the first is at most {@value #INLINE_BYTES} bytes, each next one twice the last, up to
 * {@link SplitFrame#POOLED_BYTES}, and none larger than what the partition may still add; a batch larger than that
 * gets a chunk of its own size.
 */
public final class ChunkedBatchSink implements PartitionReader.BatchSink {
    /** The fields buffer's bound for batches written into it, and the first chunk's size. */
    public static final int INLINE_BYTES = 64 * 1024;

    private final SplitFrame frame;
    private final ByteBuf fields;
    private final ByteBufBatchSink inline;
    /** what the partition may still add: the next chunk is no larger (nor smaller than the batch that opens it) */
    private int budget;
    private int bytes;
    private ByteBuf chunk;
    private ByteBufBatchSink sink;
    private int nextChunk = INLINE_BYTES;

    /** Batches of up to about {@code budget} bytes, written after what {@code fields} holds now. */
    public ChunkedBatchSink(SplitFrame frame, ByteBuf fields, int budget) {
        this.frame = frame;
        this.fields = fields;
        this.inline = new ByteBufBatchSink(fields);
        this.budget = budget;
    }

    @Override
    public ByteBuffer claim(int length) {
        budget -= length;
        bytes += length;
        if (chunk == null && fields.writerIndex() + length <= INLINE_BYTES) {
            return inline.claim(length);
        }
        if (chunk == null || chunk.writableBytes() < length) {
            // the claimed length is already taken from the budget: the chunk holds it and at most what is left after it
            ByteBuf next = frame.alloc().directBuffer(Math.max(length, Math.min(length + Math.max(budget, 0), nextChunk)));
            nextChunk = Math.min(SplitFrame.POOLED_BYTES, 2 * nextChunk);
            flush();
            chunk = next;
            sink = new ByteBufBatchSink(chunk);
        }
        return sink.claim(length);
    }

    /** Splices the last chunk into the frame; returns the bytes claimed, inline and in chunks. */
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
                frame.splice(fields.writerIndex(), done);
            } else {
                done.release();
            }
        }
    }
}
