package io.sluice.net.server.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A frame of fields with record bytes spliced in is, byte for byte, the fields with those bytes inserted where they
 * were spliced; the parts travel uncopied and are freed with the frame, or by {@code reset}/{@code release}. A
 * partition's batches land in pooled chunks that hold whole batches, start small and double up to Netty's largest
 * pooled size, and never exceed what the partition may still add unless one batch does (a small batch never takes a
 * large chunk); a small response keeps its batches in its fields buffer.
 */
class SplitFrameTest {
    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed + i * 31);
        }
        return b;
    }

    /** What a partition reader does with each claimed buffer: fills {@code length} bytes at its position, moves past them. */
    private static void copyBatch(ChunkedBatchSink sink, byte[] batch) {
        ByteBuffer dst = sink.claim(batch.length);
        dst.put(batch);
    }

    @Test
    void splicedPartsLandWhereTheyWereSplicedAndTravelUncopied() {
        ByteBuf fields = ALLOC.buffer(64).writeBytes(bytes(10, 1));
        SplitFrame frame = new SplitFrame(ALLOC);
        ByteBuf a = ALLOC.directBuffer(8).writeBytes(bytes(8, 2));
        ByteBuf b = ALLOC.directBuffer(5).writeBytes(bytes(5, 3));
        ByteBuf c = ALLOC.directBuffer(3).writeBytes(bytes(3, 4));
        frame.splice(0, a);   // before every field
        frame.splice(4, b);
        frame.splice(4, c);   // after b, at the same place
        fields.writeBytes(bytes(6, 5));
        assertThat(frame.splicedBytes()).isEqualTo(16);

        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        byte[] f = ByteBufUtil.getBytes(fields);
        expected.writeBytes(bytes(8, 2));
        expected.write(f, 0, 4);
        expected.writeBytes(bytes(5, 3));
        expected.writeBytes(bytes(3, 4));
        expected.write(f, 4, f.length - 4);

        ByteBuf out = frame.assemble(fields);
        try {
            assertThat(out).isInstanceOf(CompositeByteBuf.class);
            assertThat(ByteBufUtil.getBytes(out)).isEqualTo(expected.toByteArray());
            assertThat(List.of(a.refCnt(), b.refCnt(), c.refCnt())).as("the frame's own, not copies").containsOnly(1);
        } finally {
            out.release();
        }
        assertThat(List.of(a.refCnt(), b.refCnt(), c.refCnt(), fields.refCnt())).containsOnly(0);
    }

    @Test
    void aFrameWithoutPartsIsItsFieldsAndResetOrReleaseFreeWhatWasSpliced() {
        ByteBuf fields = ALLOC.buffer(16).writeInt(7);
        assertThat(new SplitFrame(ALLOC).assemble(fields)).isSameAs(fields);
        fields.release();

        SplitFrame frame = new SplitFrame(ALLOC);
        ByteBuf kept = ALLOC.directBuffer(4).writeInt(1);
        ByteBuf dropped = ALLOC.directBuffer(4).writeInt(2);
        frame.splice(0, kept);
        int mark = frame.mark();
        frame.splice(0, dropped);
        frame.reset(mark);
        assertThat(dropped.refCnt()).isZero();
        assertThat(frame.splicedBytes()).isEqualTo(4);
        frame.release();
        assertThat(kept.refCnt()).isZero();
    }

    @Test
    void aSmallPartitionsBatchesGoIntoTheFieldsAndTheFrameStaysOneBuffer() {
        SplitFrame frame = new SplitFrame(ALLOC);
        ByteBuf fields = ALLOC.buffer(256).writeInt(0xBEEF);
        ChunkedBatchSink sink = new ChunkedBatchSink(ALLOC, fields, chunk -> frame.splice(fields.writerIndex(), chunk), 1 << 20);
        for (int i = 0; i < 100; i++) {
            copyBatch(sink, bytes(171, i));
        }
        assertThat(sink.finish()).isEqualTo(17_100);
        fields.writeInt(0xF00D); // the next partition's header
        ByteBuf out = frame.assemble(fields);
        try {
            assertThat(out).isSameAs(fields);
            assertThat(out.readableBytes()).isEqualTo(4 + 17_100 + 4);
            assertThat(out.getInt(4 + 17_100)).isEqualTo(0xF00D);
        } finally {
            out.release();
        }
    }

    @Test
    void withoutAnInlineBufferASmallBatchTakesOnlyAFirstSizedChunk() {
        List<ByteBuf> chunks = new ArrayList<>();
        ChunkedBatchSink sink = new ChunkedBatchSink(ALLOC, null, chunks::add, 1 << 20);
        copyBatch(sink, bytes(100, 1));
        copyBatch(sink, bytes(200, 2));
        assertThat(sink.finish()).isEqualTo(300);
        try {
            assertThat(chunks).hasSize(1);
            assertThat(chunks.get(0).capacity()).as("however large the budget: a fetch of many partitions stays small")
                    .isLessThanOrEqualTo(ChunkedBatchSink.FIRST_CHUNK);
            assertThat(ByteBufUtil.getBytes(chunks.get(0))).startsWith(bytes(100, 1)).endsWith(bytes(200, 2));
        } finally {
            chunks.forEach(ByteBuf::release);
        }
    }

    @Test
    void batchesLandWholeInPooledChunksThatDoubleUpToThePooledSize() {
        SplitFrame frame = new SplitFrame(ALLOC);
        ByteBuf fields = ALLOC.buffer(16).writeInt(0xCAFE);
        int budget = 6 << 20;
        ChunkedBatchSink sink = new ChunkedBatchSink(ALLOC, fields, chunk -> frame.splice(fields.writerIndex(), chunk), budget);
        List<byte[]> batches = new ArrayList<>();
        int total = 0;
        for (int i = 0; total < budget - 50_000; i++) {
            byte[] batch = bytes(40_000 + i, i);
            batches.add(batch);
            copyBatch(sink, batch);
            total += batch.length;
        }
        byte[] big = bytes(3 << 20, 9); // one batch above the pooled size: a chunk of its own
        batches.add(big);
        copyBatch(sink, big);
        total += big.length;
        assertThat(sink.finish()).isEqualTo(total);
        assertThat(frame.splicedBytes()).as("all but the first batch, which the fields took").isEqualTo(total - batches.get(0).length);

        ByteBuf out = frame.assemble(fields);
        try {
            CompositeByteBuf composite = (CompositeByteBuf) out;
            List<Integer> chunkSizes = new ArrayList<>();
            assertThat(composite.internalComponent(0).readableBytes()).as("the fields with the first batch written into them")
                    .isEqualTo(4 + batches.get(0).length);
            for (int i = 1; i < composite.numComponents(); i++) { // after the fields, spliced at their end
                chunkSizes.add(composite.internalComponent(i).readableBytes());
            }
            assertThat(chunkSizes.get(0)).as("the first chunk: the batch that opened it, larger than the first chunk's size")
                    .isEqualTo(batches.get(1).length);
            assertThat(chunkSizes.subList(0, chunkSizes.size() - 1)).as("every chunk but the oversized batch's")
                    .allMatch(n -> n <= SplitFrame.POOLED_BYTES);
            assertThat(chunkSizes.get(chunkSizes.size() - 1)).isEqualTo(big.length);

            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            expected.writeBytes(new byte[]{0, 0, (byte) 0xCA, (byte) 0xFE});
            batches.forEach(expected::writeBytes);
            assertThat(ByteBufUtil.getBytes(out)).isEqualTo(expected.toByteArray());
        } finally {
            out.release();
        }
    }
}
