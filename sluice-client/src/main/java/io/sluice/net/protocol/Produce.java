package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.sluice.core.Acks;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * PRODUCE: a batch of records for one topic-partition.
 * <pre>
 * v1 request:  acks int8 (0 MEMORY, 1 JOURNAL, 2 SYNC) | topic string | partition int32 | batchBytes int32
 *              | one record batch (RecordBatch v2, {@link RecordBatchWriter}), stored as it is
 * v1 response: baseOffset int64 (record i has baseOffset + i; -1 for acks MEMORY)
 * v0 request:  acks int8 | topic string | partition int32 | records array
 * v0 response: offsets array of int64, one per record in request order (-1 for acks MEMORY)
 * </pre>
 * The response is sent once every record reached the durability {@code acks} asks for. On an error the whole batch
 * is reported failed; records before the failing one may have been stored (at-least-once on retry).
 */
public final class Produce {
    private Produce() {
    }

    /** The version whose request carries one record batch the broker stores as it is. */
    public static final short VERSION_BATCH = 1;

    /**
     * Writes a v1 request around a record batch: {@code batch} writes the batch at the writer index it is given
     * ({@link RecordBatchWriter}); the batch length field is filled in after it.
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
     * A v1 request as the broker sees it: where its batch lies in the frame, checked by
     * {@link RecordBatchReader#checkProduced} (so a malformed batch or an oversized record fails here, before
     * anything is written).
     */
    public record BatchRequest(Acks acks, String topic, int partition, int batchStart, int batchLength, int recordCount) {
        public static BatchRequest decode(ByteBuf in, RecordBatchReader checker, int maxEventSize) {
            Acks acks = readAcks(in);
            String topic = Wire.readRequiredString(in, "topic");
            int partition = readPartition(in);
            int length = Wire.readInt(in);
            if (length < 0 || length > in.readableBytes()) {
                throw new ProtocolException("record batch of " + length + " bytes in " + in.readableBytes() + " bytes left");
            }
            int start = in.readerIndex();
            int count = checker.checkProduced(in, start, length, maxEventSize);
            in.skipBytes(length);
            Wire.expectEnd(in, "produce request");
            return new BatchRequest(acks, topic, partition, start, length, count);
        }
    }

    /** The v1 answer: the base offset the broker gave the batch. */
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

    public record Request(Acks acks, String topic, int partition, List<ProducerRecord> records) {
        public void encode(ByteBuf out) {
            out.writeByte(acks.ordinal());
            Wire.writeString(out, topic);
            out.writeInt(partition);
            out.writeInt(records.size());
            for (ProducerRecord r : records) {
                RecordCodec.writeProduced(out, r, r.timestamp());
            }
        }

        public static Request decode(ByteBuf in) {
            return decode(in, Integer.MAX_VALUE);
        }

        /**
         * Decodes the request, first checking every record's size from its length fields alone (the same size as
         * {@link ProducerRecord#serializedSize()}): a record larger than {@code maxEventSize} fails with
         * {@link SluiceException.RecordTooLargeException} before any record of the batch is decoded into objects.
         */
        public static Request decode(ByteBuf in, int maxEventSize) {
            Acks acks = readAcks(in);
            String topic = Wire.readRequiredString(in, "topic");
            int partition = readPartition(in);
            int count = Wire.readCount(in, RecordCodec.MIN_PRODUCED_RECORD_SIZE, "record");
            if (maxEventSize < Integer.MAX_VALUE) {
                RecordCodec.checkProducedSizes(in, count, maxEventSize);
            }
            List<ProducerRecord> records = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                records.add(RecordCodec.readProduced(in, topic, partition));
            }
            Wire.expectEnd(in, "produce request");
            return new Request(acks, topic, partition, records);
        }
    }

    public record Response(long[] offsets) {
        public void encode(ByteBuf out) {
            out.writeInt(offsets.length);
            for (long o : offsets) {
                out.writeLong(o);
            }
        }

        public static Response decode(ByteBuf in) {
            int count = Wire.readCount(in, 8, "offset");
            long[] offsets = new long[count];
            for (int i = 0; i < count; i++) {
                offsets[i] = in.readLong();
            }
            return new Response(offsets);
        }
    }
}
