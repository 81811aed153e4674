package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.sluice.core.Acks;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;

import java.util.ArrayList;
import java.util.List;

/**
 * PRODUCE: a batch of records for one topic-partition.
 * <pre>
 * request:  acks int8 (0 MEMORY, 1 JOURNAL, 2 SYNC) | topic string | partition int32 | records array
 * response: offsets array of int64, one per record in request order (-1 for acks MEMORY)
 * </pre>
 * The response is sent once every record reached the durability {@code acks} asks for. On an error the whole batch
 * is reported failed; records before the failing one may have been stored (at-least-once on retry).
 */
public final class Produce {
    private Produce() {
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
            byte acksId = Wire.readByte(in);
            if (acksId < 0 || acksId >= Acks.values().length) {
                throw new ProtocolException("unknown acks " + acksId);
            }
            String topic = Wire.readRequiredString(in, "topic");
            int partition = Wire.readInt(in);
            if (partition < 0) {
                throw new ProtocolException("negative partition " + partition);
            }
            int count = Wire.readCount(in, RecordCodec.MIN_PRODUCED_RECORD_SIZE, "record");
            if (maxEventSize < Integer.MAX_VALUE) {
                RecordCodec.checkProducedSizes(in, count, maxEventSize);
            }
            List<ProducerRecord> records = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                records.add(RecordCodec.readProduced(in, topic, partition));
            }
            Wire.expectEnd(in, "produce request");
            return new Request(Acks.values()[acksId], topic, partition, records);
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
