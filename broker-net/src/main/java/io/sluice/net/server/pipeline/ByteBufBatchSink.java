package io.sluice.net.server.pipeline;

import io.netty.buffer.ByteBuf;
import io.sluice.core.PartitionReader;

import java.nio.ByteBuffer;

/**
 * Where a fetch copies a partition's stored record batches ({@link PartitionReader#readBatches}): the end of one Netty
 * buffer, one copy out of the journal per batch. The batches share one view of the buffer's writable bytes while they
 * fit (a view per batch cost a {@code DirectByteBuffer.slice} each: 100 for a fetch of 100 single-record batches);
 * the reader advances the view past each batch it copies, and the buffer's writer index moves with it. A batch that
 * does not fit grows the buffer (which may move its memory) and takes a new view of its writable bytes. The buffer must
 * be one region (never composite), so the view writes into it.
 */
public final class ByteBufBatchSink implements PartitionReader.BatchSink {
    private final ByteBuf out;
    private ByteBuffer view;

    public ByteBufBatchSink(ByteBuf out) {
        this.out = out;
    }

    @Override
    public ByteBuffer claim(int length) {
        int at = out.writerIndex();
        if (view == null || view.remaining() < length) {
            out.ensureWritable(length);
            view = out.nioBuffer(at, out.writableBytes());
        }
        out.writerIndex(at + length);
        return view;
    }
}
