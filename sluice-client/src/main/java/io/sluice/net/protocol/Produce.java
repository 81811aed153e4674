package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.sluice.core.Acks;
import io.sluice.core.SluiceException;
import io.sluice.records.CheckedBatch;
import io.sluice.records.MalformedBatchException;
import io.sluice.records.RecordBatchChecker;

import java.util.function.Consumer;

/**
 * PRODUCE: one record batch for one topic-partition.
 * <pre>
 * request:  acks int8 (0 MEMORY, 1 JOURNAL, 2 SYNC) | topic string | partition int32 | batchBytes int32
 *           | one record batch (RecordBatch v2, record-batch's {@link io.sluice.records.RecordBatchWriter}),
 *             stored as it is but its base offset
 * response: baseOffset int64 (record i has baseOffset + i; -1 for acks MEMORY)
 * </pre>
 * The response is sent once the batch reached the durability {@code acks} asks for; on an error nothing of the batch
 * was stored. Version 1 is the only one (version 0, a record array, was removed: nothing released sent it).
 */
public final class Produce {
    private Produce() {
    }

    /** The version: one record batch, stored as it is. */
    public static final short VERSION_BATCH = 1;

    /**
     * Writes a request around a record batch: {@code batch} writes the batch at the writer index it is given; the
     * batch length field is filled in after it.
     */
    public static void encodeBatch(ByteBuf out, Acks acks, String topic, int partition, Consumer<ByteBuf> batch) {
        out.writeByte(acks.ordinal());
        Wire.writeString(out, topic);
        out.writeInt(partition);
        int lengthAt = out.writerIndex();
        out.writeInt(0);
        batch.accept(out);
        out.setInt(lengthAt, out.writerIndex() - lengthAt - 4);
    }

    /**
     * A request as the broker sees it, its batch checked by {@link RecordBatchChecker#checkProduced} (so a malformed
     * batch or an oversized record fails here, before anything is written). The {@link CheckedBatch} is a view of the
     * request frame: valid while the frame is held.
     */
    public record BatchRequest(Acks acks, String topic, int partition, CheckedBatch batch) {
        /**
         * @throws ProtocolException for a malformed request or batch ({@code INVALID_REQUEST})
         * @throws SluiceException.RecordTooLargeException for a record above {@code maxEventSize}
         */
        public static BatchRequest decode(ByteBuf in, RecordBatchChecker checker, int maxEventSize) {
            Acks acks = readAcks(in);
            String topic = Wire.readRequiredString(in, "topic");
            int partition = readPartition(in);
            int length = Wire.readInt(in);
            if (length < 0 || length > in.readableBytes()) {
                throw new ProtocolException("record batch of " + length + " bytes in " + in.readableBytes() + " bytes left");
            }
            CheckedBatch batch;
            try {
                batch = checker.checkProduced(in.nioBuffer(in.readerIndex(), length), 0, length, maxEventSize);
            } catch (MalformedBatchException e) {
                throw new ProtocolException("record batch: " + e.getMessage());
            }
            in.skipBytes(length);
            Wire.expectEnd(in, "produce request");
            return new BatchRequest(acks, topic, partition, batch);
        }
    }

    /** The answer: the base offset the broker gave the batch. */
    public record BatchResponse(long baseOffset) {
        public void encode(ByteBuf out) {
            out.writeLong(baseOffset);
        }

        public static BatchResponse decode(ByteBuf in) {
            BatchResponse r = new BatchResponse(Wire.readLong(in));
            Wire.expectEnd(in, "produce response");
            return r;
        }
    }

    private static Acks readAcks(ByteBuf in) {
        byte acksId = Wire.readByte(in);
        if (acksId < 0 || acksId >= Acks.values().length) {
            throw new ProtocolException("unknown acks " + acksId);
        }
        return Acks.values()[acksId];
    }

    private static int readPartition(ByteBuf in) {
        int partition = Wire.readInt(in);
        if (partition < 0) {
            throw new ProtocolException("negative partition " + partition);
        }
        return partition;
    }
}
