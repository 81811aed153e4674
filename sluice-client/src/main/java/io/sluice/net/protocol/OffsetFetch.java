package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.sluice.core.TopicPartition;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * OFFSET_FETCH (v1): a group's committed next-offsets, read by the member that owns the partitions in
 * {@code generation} (memberId null: an unfenced read, for tools).
 * <pre>
 * request:  groupId string | memberId string | generation int32 | partitions array of  topic string | partition int32
 * response: offsets array of  topic string | partition int32 | offset int64 (-1: nothing committed)
 * </pre>
 */
public final class OffsetFetch {
    public static final long NO_OFFSET = -1;

    private OffsetFetch() {
    }

    public record Request(String groupId, String memberId, int generation, List<TopicPartition> partitions) {
        public void encode(ByteBuf out) {
            Wire.writeString(out, groupId);
            Wire.writeString(out, memberId);
            out.writeInt(generation);
            out.writeInt(partitions.size());
            for (TopicPartition tp : partitions) {
                Groups.writePartition(out, tp);
            }
        }

        public static Request decode(ByteBuf in) {
            String groupId = Wire.readRequiredString(in, "groupId");
            String memberId = Wire.readString(in);
            int generation = Groups.readGeneration(in);
            int count = Wire.readCount(in, 2 + 4, "partition");
            List<TopicPartition> partitions = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                partitions.add(Groups.readPartition(in));
            }
            Wire.expectEnd(in, "offset fetch request");
            return new Request(groupId, memberId, generation, partitions);
        }
    }

    public record Response(Map<TopicPartition, Long> offsets) {
        public void encode(ByteBuf out) {
            out.writeInt(offsets.size());
            offsets.forEach((tp, offset) -> {
                Groups.writePartition(out, tp);
                out.writeLong(offset);
            });
        }

        public static Response decode(ByteBuf in) {
            int count = Wire.readCount(in, 2 + 4 + 8, "offset");
            Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
            for (int i = 0; i < count; i++) {
                offsets.put(Groups.readPartition(in), Wire.readLong(in));
            }
            return new Response(offsets);
        }
    }
}
