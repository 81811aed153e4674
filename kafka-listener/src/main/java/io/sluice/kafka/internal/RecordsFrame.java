package io.sluice.kafka.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.net.server.pipeline.SplitFrame;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Writable;
import org.apache.kafka.common.record.BaseRecords;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * A response frame whose record sets travel in their own buffers, as Kafka's own broker sends a fetch's records apart
 * from the fields around them: the generated classes write every other field into one small buffer, and the frame is
 * a composite of slices of it around each record buffer ({@link SplitFrame}, as the binary port's fetch), so the
 * records are not copied again (a fetch reads them once from the journal into pooled chunks, a composite per
 * partition: {@code ChunkedBatchSink}, {@link SplicedRecords}).
 * <pre>
 * +--------+-----------------------+-----------+----------------+-----------+-- ... --+---------------+
 * | length | header, fields before | records 0 | fields between | records 1 |         | fields after  |
 * +--------+-----------------------+-----------+----------------+-----------+-- ... --+---------------+
 *   head slice                       own buffer  head slice       own buffer            head slice
 * </pre>
 * A fetch of 4 partitions of 1 MiB each is then five small slices and each partition's pooled chunks, where one
 * 4 MiB buffer would be allocated outside Netty's pool (above its 1 MiB size classes: a fresh mapping, zeroed or
 * faulted in page by page, and freed again) and a heap copy of each partition's records before it a humongous G1
 * allocation.
 */
final class RecordsFrame {
    private RecordsFrame() {
    }

    /**
     * Encodes {@code body} whose non-empty record sets are, in the order the generated classes write them, exactly the
     * readable bytes of {@code records}. Takes ownership of {@code records}: they end up in the returned frame, or are
     * released when encoding fails.
     */
    static ByteBuf encode(ByteBufAllocator alloc, int correlationId, short headerVersion, ApiMessage body, short version,
                          List<ByteBuf> records) {
        SplitFrame frame = new SplitFrame(alloc);
        ByteBuf head = null;
        int spliced = 0;
        try {
            ObjectSerializationCache cache = new ObjectSerializationCache();
            ResponseHeaderData responseHeader = new ResponseHeaderData().setCorrelationId(correlationId);
            int size = responseHeader.size(cache, headerVersion) + body.size(cache, version);
            int recordBytes = 0;
            for (ByteBuf r : records) {
                recordBytes += r.readableBytes();
            }
            int headBytes = size - recordBytes;
            head = alloc.buffer(4 + headBytes);
            head.writeInt(size);
            ByteBuffer nio = head.nioBuffer(4, headBytes);
            SplitWriter writer = new SplitWriter(nio, records);
            responseHeader.write(writer, cache, headerVersion);
            body.write(writer, cache, version);
            if (nio.hasRemaining() || writer.next != records.size()) {
                throw new IllegalStateException("response of " + size + " bytes wrote " + nio.position() + " of " + headBytes
                        + " field bytes and " + writer.next + " of " + records.size() + " record sets");
            }
            head.writerIndex(4 + headBytes);
            for (; spliced < records.size(); spliced++) {
                frame.splice(4 + writer.splits[spliced], records.get(spliced));
            }
        } catch (RuntimeException e) {
            if (head != null) {
                head.release();
            }
            frame.release();
            for (int i = spliced; i < records.size(); i++) {
                records.get(i).release();
            }
            throw e;
        }
        return frame.assemble(head);
    }

    /**
     * Writes every field into the head buffer (Kafka's {@link ByteBufferAccessor}), and for each non-empty record set
     * notes where it goes instead of copying it there.
     */
    private static final class SplitWriter implements Writable {
        private final ByteBufferAccessor head;
        private final ByteBuffer nio;
        private final List<ByteBuf> records;
        /** where in the head (after the length) each record set goes */
        final int[] splits;
        int next;

        SplitWriter(ByteBuffer nio, List<ByteBuf> records) {
            this.head = new ByteBufferAccessor(nio);
            this.nio = nio;
            this.records = records;
            this.splits = new int[records.size()];
        }

        @Override
        public void writeRecords(BaseRecords set) {
            int bytes = set.sizeInBytes();
            if (bytes == 0) {
                return;
            }
            if (next == records.size() || records.get(next).readableBytes() != bytes) {
                throw new IllegalStateException("record set " + next + " of " + bytes + " bytes does not match buffer "
                        + (next == records.size() ? "(none left)" : "of " + records.get(next).readableBytes() + " bytes"));
            }
            splits[next++] = nio.position();
        }

        @Override
        public void writeByte(byte val) {
            head.writeByte(val);
        }

        @Override
        public void writeShort(short val) {
            head.writeShort(val);
        }

        @Override
        public void writeInt(int val) {
            head.writeInt(val);
        }

        @Override
        public void writeLong(long val) {
            head.writeLong(val);
        }

        @Override
        public void writeDouble(double val) {
            head.writeDouble(val);
        }

        @Override
        public void writeByteArray(byte[] arr) {
            head.writeByteArray(arr);
        }

        @Override
        public void writeUnsignedVarint(int i) {
            head.writeUnsignedVarint(i);
        }

        @Override
        public void writeByteBuffer(ByteBuffer buf) {
            head.writeByteBuffer(buf);
        }

        @Override
        public void writeVarint(int i) {
            head.writeVarint(i);
        }

        @Override
        public void writeVarlong(long i) {
            head.writeVarlong(i);
        }

        @Override
        public void writeUuid(Uuid uuid) {
            head.writeUuid(uuid);
        }

        @Override
        public void writeUnsignedShort(int i) {
            head.writeUnsignedShort(i);
        }

        @Override
        public void writeUnsignedInt(long i) {
            head.writeUnsignedInt(i);
        }
    }
}
