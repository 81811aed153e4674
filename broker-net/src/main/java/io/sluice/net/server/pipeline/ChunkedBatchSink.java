package io.sluice.net.server.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.core.PartitionReader;

import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * Where a fetch copies one partition's stored record batches, so that no buffer is larger than Netty pools and none is
 * much larger than what it holds. With an inline buffer (the response's fields), a batch goes into it while it stays
 * within {@value #INLINE_BYTES} bytes: a small response stays one pooled buffer, written with one system call. The
 * other batches go into pooled chunks handed on in order as each fills ({@link #finish} hands on the last). A chunk
 * holds whole batches: the first is at most {@value #FIRST_CHUNK} bytes, each next one twice the last, up to
 * {@link SplitFrame#POOLED_BYTES}, and none larger than what the partition may still add; a batch larger than that
 * gets a chunk of its own size. A partition's chunks thus hold at most about twice its batches' bytes, however many
 * partitions a fetch names.
 */
public final class ChunkedBatchSink implements PartitionReader.BatchSink {
    /** The inline buffer's bound for batches written into it. */
    public static final int INLINE_BYTES = 64 * 1024;
    /** The first chunk's size (unless a batch is larger). */
    public static final int FIRST_CHUNK = 8 * 1024;

    private final ByteBufAllocator alloc;
    private final ByteBuf inline;
    private final ByteBufBatchSink inlineSink;
    private final Consumer<ByteBuf> chunks;
    /** what the partition may still add: the next chunk is no larger (nor smaller than the batch that opens it) */
    private int budget;
    private int bytes;
    private ByteBuf chunk;
    private ByteBufBatchSink sink;
    private int nextChunk = FIRST_CHUNK;

    /**
     * Batches of up to about {@code budget} bytes: into {@code inline} (after what it holds now; null for none) while it
     * stays small, then into chunks handed to {@code chunks}, which takes ownership of each.
     */
    public ChunkedBatchSink(ByteBufAllocator alloc, ByteBuf inline, Consumer<ByteBuf> chunks, int budget) {
        this.alloc = alloc;
        this.inline = inline;
        this.inlineSink = inline == null ? null : new ByteBufBatchSink(inline);
        this.chunks = chunks;
        this.budget = budget;
    }

    @Override
    public ByteBuffer claim(int length) {
        budget -= length;
        bytes += length;
        if (inline != null && chunk == null && inline.writerIndex() + length <= INLINE_BYTES) {
            return inlineSink.claim(length);
        }
        if (chunk == null || chunk.writableBytes() < length) {
            // the claimed length is already taken from the budget: the chunk holds it and at most what is left after it
            ByteBuf next = alloc.directBuffer(Math.max(length, Math.min(length + Math.max(budget, 0), nextChunk)));
            nextChunk = Math.min(SplitFrame.POOLED_BYTES, 2 * nextChunk);
            flush();
            chunk = next;
            sink = new ByteBufBatchSink(chunk);
        }
        return sink.claim(length);
    }

    /** Hands on the last chunk; returns the bytes claimed, inline and in chunks. */
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
                chunks.accept(done);
            } else {
                done.release();
            }
        }
    }
}
