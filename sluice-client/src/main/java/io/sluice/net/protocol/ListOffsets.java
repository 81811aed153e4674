package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;

import java.util.ArrayList;
import java.util.List;

/**
 * LIST_OFFSETS: the first retained and the next-to-be-written offset of a topic's partitions.
 * <pre>
 * request:  topic string | partitions array of int32 (empty array: every partition)
 * response: partitions array of  partition int32 | startOffset int64 | endOffset int64
 * </pre>
 */
public final class ListOffsets {
    private ListOffsets() {
    }

    public record Request(String topic, List<Integer> partitions) {
        public void encode(ByteBuf out) {
            Wire.writeString(out, topic);
            out.writeInt(partitions.size());
            for (int p : partitions) {
                out.writeInt(p);
            }
        }

        public static Request decode(ByteBuf in) {
            String topic = Wire.readRequiredString(in, "topic");
            int count = Wire.readCount(in, 4, "partition");
            List<Integer> partitions = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                int p = Wire.readInt(in);
                if (p < 0) {
                    throw new ProtocolException("negative partition " + p);
                }
                partitions.add(p);
            }
            Wire.expectEnd(in, "list offsets request");
            return new Request(topic, partitions);
        }
    }

    public record PartitionOffsets(int partition, long startOffset, long endOffset) {
    }

    public record Response(List<PartitionOffsets> partitions) {
        public void encode(ByteBuf out) {
            out.writeInt(partitions.size());
            for (PartitionOffsets p : partitions) {
                out.writeInt(p.partition());
                out.writeLong(p.startOffset());
                out.writeLong(p.endOffset());
            }
        }

        public static Response decode(ByteBuf in) {
            int count = Wire.readCount(in, 20, "partition");
            List<PartitionOffsets> partitions = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                partitions.add(new PartitionOffsets(Wire.readInt(in), Wire.readLong(in), Wire.readLong(in)));
            }
            return new Response(partitions);
        }
    }
}
