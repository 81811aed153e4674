package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.sluice.core.GroupStatus;
import io.sluice.core.OffsetResetPlan;
import io.sluice.core.OffsetResetSpec;
import io.sluice.core.TopicPartition;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Operator APIs: consumer-group tooling and topic deletion / retention.
 * <pre>
 * LIST_GROUPS     request:  (empty)
 *                 response: groups [string]
 * DESCRIBE_GROUP  request:  groupId string
 *                 response: groupId string | topic string (null: unknown) | generation int32
 *                           | members [memberId string | assignment [topic string | partition int32]]
 *                           | partitions [topic string (v1+) | partition int32 | committed int64 (-1: none)
 *                                         | startOffset int64 | endOffset int64 | lag int64 | member string (null: unowned)]
 * RESET_OFFSETS   request:  groupId string | topic string | kind int8 | value int64 | execute bool
 *                           kind: 0 to-earliest, 1 to-latest, 2 to-offset, 3 to-datetime (value: epoch ms),
 *                                 4 shift-by (value: signed delta)
 *                 response: executed bool | partitions [partition int32 | committed int64 | target int64
 *                                                    | startOffset int64 | endOffset int64]
 * DELETE_TOPIC    request:  name string
 *                 response: (empty)
 * ALTER_TOPIC     request:  name string | retentionMillis int64 | retentionBytes int64   (-1: unlimited)
 *                 response: the topic's description (the {@link Metadata} layout)
 * </pre>
 * An unknown group answers {@code GROUP_NOT_FOUND}; a reset with {@code execute} while the group has live members
 * answers {@code NON_EMPTY_GROUP} and changes nothing.
 */
public final class Admin {
    private Admin() {
    }

    // ----------------------------------------------------------------- LIST_GROUPS

    public static void writeGroupList(ByteBuf out, List<String> groups) {
        out.writeInt(groups.size());
        for (String g : groups) {
            Wire.writeString(out, g);
        }
    }

    public static List<String> readGroupList(ByteBuf in) {
        int count = Wire.readCount(in, 2, "group");
        List<String> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(Wire.readRequiredString(in, "groupId"));
        }
        return out;
    }

    // ----------------------------------------------------------------- DESCRIBE_GROUP

    /** DESCRIBE_GROUP from this version on: every partition row starts with its topic. */
    public static final short VERSION_ROW_TOPICS = 1;

    public static void writeGroupStatus(ByteBuf out, GroupStatus s, short version) {
        Wire.writeString(out, s.groupId());
        Wire.writeString(out, s.topic());
        out.writeInt(s.generation());
        out.writeInt(s.members().size());
        s.members().forEach((member, assignment) -> {
            Wire.writeString(out, member);
            out.writeInt(assignment.size());
            for (TopicPartition tp : new TreeSet<>(assignment)) {
                Groups.writePartition(out, tp);
            }
        });
        out.writeInt(s.partitions().size());
        for (GroupStatus.PartitionLag p : s.partitions()) {
            if (version >= VERSION_ROW_TOPICS) {
                Wire.writeString(out, p.topic());
            }
            out.writeInt(p.partition());
            out.writeLong(p.committed());
            out.writeLong(p.startOffset());
            out.writeLong(p.endOffset());
            out.writeLong(p.lag());
            Wire.writeString(out, p.member());
        }
    }

    /** Reads the answer to the version this client sends ({@link ApiKey#maxVersion}). */
    public static GroupStatus readGroupStatus(ByteBuf in) {
        String groupId = Wire.readRequiredString(in, "groupId");
        String topic = Wire.readString(in);
        int generation = Wire.readInt(in);
        int memberCount = Wire.readCount(in, 6, "member");
        Map<String, Set<TopicPartition>> members = new LinkedHashMap<>();
        for (int i = 0; i < memberCount; i++) {
            String member = Wire.readRequiredString(in, "memberId");
            int count = Wire.readCount(in, 6, "partition");
            Set<TopicPartition> assignment = new TreeSet<>();
            for (int j = 0; j < count; j++) {
                assignment.add(Groups.readPartition(in));
            }
            members.put(member, assignment);
        }
        int partitionCount = Wire.readCount(in, 38, "partition");
        List<GroupStatus.PartitionLag> partitions = new ArrayList<>(partitionCount);
        for (int i = 0; i < partitionCount; i++) {
            String rowTopic = ApiKey.DESCRIBE_GROUP.maxVersion >= VERSION_ROW_TOPICS ? Wire.readString(in) : topic;
            partitions.add(new GroupStatus.PartitionLag(rowTopic, Wire.readInt(in), Wire.readLong(in), Wire.readLong(in),
                    Wire.readLong(in), Wire.readLong(in), Wire.readString(in)));
        }
        Wire.expectEnd(in, "describe group response");
        return new GroupStatus(groupId, topic, generation, members, partitions);
    }

    // ----------------------------------------------------------------- RESET_OFFSETS

    public record ResetRequest(String groupId, String topic, OffsetResetSpec spec, boolean execute) {
        public void encode(ByteBuf out) {
            Wire.writeString(out, groupId);
            Wire.writeString(out, topic);
            out.writeByte(spec.kind().ordinal());
            out.writeLong(spec.value());
            out.writeByte(execute ? 1 : 0);
        }

        public static ResetRequest decode(ByteBuf in) {
            String groupId = Wire.readRequiredString(in, "groupId");
            String topic = Wire.readRequiredString(in, "topic");
            byte kind = Wire.readByte(in);
            OffsetResetSpec.Kind[] kinds = OffsetResetSpec.Kind.values();
            if (kind < 0 || kind >= kinds.length) {
                throw new ProtocolException("reset kind must be 0.." + (kinds.length - 1) + ", got " + kind);
            }
            long value = Wire.readLong(in);
            boolean execute = Wire.readBoolean(in);
            Wire.expectEnd(in, "reset offsets request");
            return new ResetRequest(groupId, topic, new OffsetResetSpec(kinds[kind], value), execute);
        }
    }

    public static void writeResetPlan(ByteBuf out, OffsetResetPlan plan) {
        out.writeByte(plan.executed() ? 1 : 0);
        out.writeInt(plan.partitions().size());
        for (OffsetResetPlan.Row r : plan.partitions()) {
            out.writeInt(r.partition());
            out.writeLong(r.committed());
            out.writeLong(r.target());
            out.writeLong(r.startOffset());
            out.writeLong(r.endOffset());
        }
    }

    public static OffsetResetPlan readResetPlan(ByteBuf in, String groupId, String topic) {
        boolean executed = Wire.readBoolean(in);
        int count = Wire.readCount(in, 36, "partition");
        List<OffsetResetPlan.Row> rows = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            rows.add(new OffsetResetPlan.Row(Wire.readInt(in), Wire.readLong(in), Wire.readLong(in), Wire.readLong(in), Wire.readLong(in)));
        }
        Wire.expectEnd(in, "reset offsets response");
        return new OffsetResetPlan(groupId, topic, rows, executed);
    }

    // ----------------------------------------------------------------- DELETE_TOPIC / ALTER_TOPIC

    public static String readTopicName(ByteBuf in) {
        String name = Wire.readRequiredString(in, "topic");
        Wire.expectEnd(in, "delete topic request");
        return name;
    }

    public record AlterRequest(String topic, long retentionMillis, long retentionBytes) {
        public void encode(ByteBuf out) {
            Wire.writeString(out, topic);
            out.writeLong(retentionMillis);
            out.writeLong(retentionBytes);
        }

        public static AlterRequest decode(ByteBuf in) {
            AlterRequest r = new AlterRequest(Wire.readRequiredString(in, "topic"), Wire.readLong(in), Wire.readLong(in));
            Wire.expectEnd(in, "alter topic request");
            return r;
        }
    }
}
