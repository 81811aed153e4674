package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.sluice.core.TopicPartition;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * OFFSET_COMMIT (v1): persists a group's next-offsets (durable across an OS crash once answered), fenced by member id
 * and generation ({@link io.sluice.core.ConsumerGroups#commit}).
 * <pre>
 * request:  groupId string | memberId string (null: a consumer outside the membership) | generation int32 (-1: none)
 *           | offsets array of  topic string | partition int32 | offset int64
 * response: (empty)
 * </pre>
 */
public final class OffsetCommit {
    private OffsetCommit() {
    }

    public record Request(String groupId, String memberId, int generation, Map<TopicPartition, Long> offsets) {
        public void encode(ByteBuf out) {
            Wire.writeString(out, groupId);
            Wire.writeString(out, memberId);
            out.writeInt(generation);
            out.writeInt(offsets.size());
            offsets.forEach((tp, offset) -> {
                Wire.writeString(out, tp.topic());
                out.writeInt(tp.partition());
                out.writeLong(offset);
            });
        }

        public static Request decode(ByteBuf in) {
            String groupId = Wire.readRequiredString(in, "groupId");
            String memberId = Wire.readString(in);
            int generation = Groups.readGeneration(in);
            int count = Wire.readCount(in, 2 + 4 + 8, "offset");
            Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
            for (int i = 0; i < count; i++) {
                TopicPartition tp = Groups.readPartition(in);
                long offset = Wire.readLong(in);
                if (offset < 0) {
                    throw new ProtocolException("negative offset " + offset + " for " + tp);
                }
                offsets.put(tp, offset);
            }
            Wire.expectEnd(in, "offset commit request");
            return new Request(groupId, memberId, generation, offsets);
        }
    }
}
