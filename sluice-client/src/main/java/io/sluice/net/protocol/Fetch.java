package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.records.MalformedBatchException;
import io.sluice.records.RecordBatchReader;

import java.util.ArrayList;
import java.util.List;

/**
 * FETCH: records from one or more partitions, each from an offset; long-polls up to {@code maxWaitMillis} until at
 * least one partition has a record.
 * <pre>
 * request:  maxWaitMillis int32 | maxBytes int32 | partitions array of
 *              topic string | partition int32 | offset int64 | partitionMaxBytes int32
 * response: partitions array of
 *              topic string | partition int32 | errorCode int16 | errorMessage string (null when 0)
 *              | startOffset int64 | endOffset int64
 *              | batchBytes int32 | the stored record batches, back to back (record-batch's
 *                {@link RecordBatchReader})
 * </pre>
 * The response ships the journal's record batches whole and unchanged: the first may start before the requested
 * offset (the client skips those records), {@code maxBytes} and {@code partitionMaxBytes} bound batch bytes, and at
 * least one whole batch per partition is returned when available, so a batch larger than the bound still makes
 * progress. Version 1 is the only one (version 0, records re-encoded one by one, was removed: nothing released sent
 * it).
 */
public final class Fetch {
    /** The version: the stored record batches, whole and unchanged. */
    public static final short VERSION_BATCHES = 1;

    private Fetch() {
    }

    public record PartitionRequest(TopicPartition partition, long offset, int maxBytes) {
    }

    public record Request(int maxWaitMillis, int maxBytes, List<PartitionRequest> partitions) {
        public void encode(ByteBuf out) {
            out.writeInt(maxWaitMillis);
            out.writeInt(maxBytes);
            out.writeInt(partitions.size());
            for (PartitionRequest p : partitions) {
                Wire.writeString(out, p.partition().topic());
                out.writeInt(p.partition().partition());
                out.writeLong(p.offset());
                out.writeInt(p.maxBytes());
            }
        }

        public static Request decode(ByteBuf in) {
            int maxWait = Wire.readInt(in);
            int maxBytes = Wire.readInt(in);
            if (maxWait < 0 || maxBytes <= 0) {
                throw new ProtocolException("maxWaitMillis must be >= 0 and maxBytes > 0, got " + maxWait + " and " + maxBytes);
            }
            int count = Wire.readCount(in, 2 + 4 + 8 + 4, "partition");
            List<PartitionRequest> partitions = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                String topic = Wire.readRequiredString(in, "topic");
                int partition = Wire.readInt(in);
                long offset = Wire.readLong(in);
                int partMax = Wire.readInt(in);
                if (partition < 0 || offset < 0 || partMax <= 0) {
                    throw new ProtocolException("invalid fetch partition " + topic + "-" + partition + " offset " + offset + " maxBytes " + partMax);
                }
                partitions.add(new PartitionRequest(new TopicPartition(topic, partition), offset, partMax));
            }
            Wire.expectEnd(in, "fetch request");
            return new Request(maxWait, maxBytes, partitions);
        }
    }

    public record PartitionData(TopicPartition partition, SluiceException.Code error, String errorMessage,
                                long startOffset, long endOffset, List<ConsumerRecord> records) {
    }

    /** Decoded by clients; the server writes this layout directly while it reads the journal. */
    public record Response(List<PartitionData> partitions) {
        /**
         * Writes a partition header and returns the index of its batch bytes, written as 0, to patch with
         * {@link #patchCount}.
         */
        public static int writePartitionHeader(ByteBuf out, TopicPartition tp, SluiceException.Code error, String message,
                                               long startOffset, long endOffset) {
            Wire.writeString(out, tp.topic());
            out.writeInt(tp.partition());
            out.writeShort(error.id);
            Wire.writeString(out, error == SluiceException.Code.NONE ? null : message);
            out.writeLong(startOffset);
            out.writeLong(endOffset);
            int countIndex = out.writerIndex();
            out.writeInt(0);
            return countIndex;
        }

        /** Patches the batch bytes written by {@link #writePartitionHeader}. */
        public static void patchCount(ByteBuf out, int countIndex, int count) {
            out.setInt(countIndex, count);
        }

        /**
         * Decodes a response to {@code request}: each partition's batches are checked (framing, CRC32C)
         * and decoded, keeping the records at or after the offset the request asked for. A damaged batch ends that
         * partition's records: if it is the first, the partition carries {@code CORRUPT_RECORD} with a message
         * naming the partition and the offsets; otherwise the records before it are returned and the next fetch,
         * which starts at the damaged batch, reports it.
         */
        public static Response decodeBatches(ByteBuf in, Request request) {
            RecordBatchReader reader = new RecordBatchReader();
            int count = Wire.readCount(in, 2 + 4 + 2 + 2 + 8 + 8 + 4, "partition");
            List<PartitionData> partitions = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                PartitionHeader h = PartitionHeader.read(in);
                int size = Wire.readInt(in);
                if (size < 0 || size > in.readableBytes()) {
                    throw new ProtocolException("batch bytes " + size + " do not fit the " + in.readableBytes() + " bytes left");
                }
                TopicPartition tp = h.partition;
                SluiceException.Code error = h.error;
                String message = h.message;
                long from = requestedOffset(request, i, tp);
                List<ConsumerRecord> list = new ArrayList<>();
                try {
                    reader.readAll(in.nioBuffer(in.readerIndex(), size), 0, size, tp.topic(), tp.partition(), from, list);
                } catch (MalformedBatchException e) {
                    if (list.isEmpty()) {
                        error = SluiceException.Code.CORRUPT_RECORD;
                        message = "the fetched batch holding offset " + from + " (base offset " + e.baseOffset()
                                + ") is damaged: " + e.getMessage();
                    }
                }
                in.skipBytes(size);
                partitions.add(new PartitionData(tp, error, message, h.start, h.end, list));
            }
            return new Response(partitions);
        }

        /** What the server writes before a partition's records or batches ({@link #writePartitionHeader}). */
        private record PartitionHeader(TopicPartition partition, SluiceException.Code error, String message, long start, long end) {
            static PartitionHeader read(ByteBuf in) {
                String topic = Wire.readRequiredString(in, "topic");
                int partition = Wire.readInt(in);
                if (partition < 0) {
                    throw new ProtocolException("negative partition " + partition + " in a fetch response");
                }
                SluiceException.Code error = SluiceException.Code.of(Wire.readShort(in));
                String message = Wire.readString(in);
                long start = Wire.readLong(in);
                long end = Wire.readLong(in);
                return new PartitionHeader(new TopicPartition(topic, partition), error, message, start, end);
            }
        }

        /** The offset {@code request} asked for on {@code tp}; partitions are answered in request order. */
        private static long requestedOffset(Request request, int index, TopicPartition tp) {
            List<PartitionRequest> asked = request.partitions();
            if (index < asked.size() && asked.get(index).partition().equals(tp)) {
                return asked.get(index).offset();
            }
            for (PartitionRequest p : asked) {
                if (p.partition().equals(tp)) {
                    return p.offset();
                }
            }
            throw new ProtocolException("fetch response names " + tp + ", which the request did not ask for");
        }
    }
}
