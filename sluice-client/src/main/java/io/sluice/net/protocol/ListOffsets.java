package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;

import java.util.ArrayList;
import java.util.List;

/**
 * LIST_OFFSETS: the first retained and the next-to-be-written offset of a topic's partitions and, from version 1, the
 * first offset whose timestamp is at or after a given one (a seek by time in one round trip).
 * <pre>
 * request v0:  topic string | partitions [ partition int32 ]                   (empty array: every partition)
 * request v1:  topic string | partitions [ partition int32 | timestamp int64 ] (empty array: every partition, no timestamp)
 * response v0: partitions [ partition int32 | startOffset int64 | endOffset int64 ]
 * response v1: partitions [ partition int32 | startOffset int64 | endOffset int64 | timestampOffset int64 ]
 * </pre>
 * {@code timestampOffset} is the first offset whose record timestamp is at or after {@code timestamp}, the end offset
 * if there is none. {@link #NO_TIMESTAMP} asks for no search: every record is at or after it, so its answer is the
 * start offset, which the server returns without reading the journal (and which version 0 implies).
 */
public final class ListOffsets {
    /** Start and end offsets only. */
    public static final short VERSION_RANGE = 0;
    /** Adds a timestamp per partition and the offset found for it. */
    public static final short VERSION_TIMESTAMPS = 1;
    /** "No timestamp": no journal search; the answer's {@code timestampOffset} is the start offset. */
    public static final long NO_TIMESTAMP = Long.MIN_VALUE;

    private ListOffsets() {
    }

    /** One partition to answer, and the timestamp to look up in it (or {@link #NO_TIMESTAMP}). */
    public record PartitionQuery(int partition, long timestamp) {
        public PartitionQuery {
            if (partition < 0) {
                throw new IllegalArgumentException("negative partition " + partition);
            }
        }

        public boolean hasTimestamp() {
            return timestamp != NO_TIMESTAMP;
        }
    }

    public record Request(String topic, List<PartitionQuery> partitions) {
        public Request {
            partitions = List.copyOf(partitions);
        }

        /** Start and end offsets of these partitions (empty: every partition), no timestamp lookup. */
        public static Request ranges(String topic, List<Integer> partitions) {
            List<PartitionQuery> queries = new ArrayList<>(partitions.size());
            for (int p : partitions) {
                queries.add(new PartitionQuery(p, NO_TIMESTAMP));
            }
            return new Request(topic, queries);
        }

        /** Whether any partition asks for a timestamp lookup (a journal search on the server). */
        public boolean searchesTimestamps() {
            for (PartitionQuery q : partitions) {
                if (q.hasTimestamp()) {
                    return true;
                }
            }
            return false;
        }

        /** Encodes the version the client sends ({@link ApiKey#LIST_OFFSETS}' maximum). */
        public void encode(ByteBuf out) {
            encode(out, ApiKey.LIST_OFFSETS.maxVersion);
        }

        /** @throws IllegalArgumentException for a timestamp at version 0, which cannot carry it */
        public void encode(ByteBuf out, short version) {
            if (version == VERSION_RANGE && searchesTimestamps()) {
                throw new IllegalArgumentException("LIST_OFFSETS version 0 carries no timestamp: " + this);
            }
            Wire.writeString(out, topic);
            out.writeInt(partitions.size());
            for (PartitionQuery q : partitions) {
                out.writeInt(q.partition());
                if (version >= VERSION_TIMESTAMPS) {
                    out.writeLong(q.timestamp());
                }
            }
        }

        public static Request decode(ByteBuf in, short version) {
            String topic = Wire.readRequiredString(in, "topic");
            boolean timestamps = version >= VERSION_TIMESTAMPS;
            int count = Wire.readCount(in, timestamps ? 12 : 4, "partition");
            List<PartitionQuery> partitions = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                int p = Wire.readInt(in);
                if (p < 0) {
                    throw new ProtocolException("negative partition " + p);
                }
                partitions.add(new PartitionQuery(p, timestamps ? Wire.readLong(in) : NO_TIMESTAMP));
            }
            Wire.expectEnd(in, "list offsets request");
            return new Request(topic, partitions);
        }
    }

    /**
     * @param timestampOffset the first offset whose timestamp is at or after the requested one, the end offset if
     *                        none; the start offset for {@link #NO_TIMESTAMP} and in a version-0 answer
     */
    public record PartitionOffsets(int partition, long startOffset, long endOffset, long timestampOffset) {
        /** A version-0 answer, or one for {@link #NO_TIMESTAMP}. */
        public static PartitionOffsets range(int partition, long startOffset, long endOffset) {
            return new PartitionOffsets(partition, startOffset, endOffset, startOffset);
        }
    }

    public record Response(List<PartitionOffsets> partitions) {
        public void encode(ByteBuf out, short version) {
            out.writeInt(partitions.size());
            for (PartitionOffsets p : partitions) {
                out.writeInt(p.partition());
                out.writeLong(p.startOffset());
                out.writeLong(p.endOffset());
                if (version >= VERSION_TIMESTAMPS) {
                    out.writeLong(p.timestampOffset());
                }
            }
        }

        /** Decodes the version the client sends ({@link ApiKey#LIST_OFFSETS}' maximum). */
        public static Response decode(ByteBuf in) {
            return decode(in, ApiKey.LIST_OFFSETS.maxVersion);
        }

        public static Response decode(ByteBuf in, short version) {
            boolean timestamps = version >= VERSION_TIMESTAMPS;
            int count = Wire.readCount(in, timestamps ? 28 : 20, "partition");
            List<PartitionOffsets> partitions = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                int partition = Wire.readInt(in);
                long start = Wire.readLong(in);
                long end = Wire.readLong(in);
                partitions.add(timestamps ? new PartitionOffsets(partition, start, end, Wire.readLong(in))
                        : PartitionOffsets.range(partition, start, end));
            }
            return new Response(partitions);
        }
    }
}
