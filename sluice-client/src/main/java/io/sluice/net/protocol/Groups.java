package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.sluice.core.ConsumerGroups;
import io.sluice.core.TopicPartition;

import java.util.Set;
import java.util.TreeSet;

/**
 * Consumer-group membership: JOIN_GROUP, HEARTBEAT and LEAVE_GROUP, mapped one to one onto core
 * {@link ConsumerGroups}.
 * <pre>
 * JOIN_GROUP request:  groupId string | topic string | memberId string (null: new member) | clientId string
 *                      | sessionTimeoutMillis int32
 * HEARTBEAT request:   groupId string | memberId string
 * LEAVE_GROUP request: groupId string | memberId string
 *
 * JOIN_GROUP and HEARTBEAT response (membership):
 *   memberId string | generation int32 | assignment array of  topic string | partition int32
 * LEAVE_GROUP response: (empty)
 * </pre>
 * A heartbeat from a member the group no longer knows answers {@code UNKNOWN_MEMBER}: the client rejoins.
 */
public final class Groups {
    private Groups() {
    }

    public record JoinRequest(String groupId, String topic, String memberId, String clientId, int sessionTimeoutMillis) {
        public void encode(ByteBuf out) {
            Wire.writeString(out, groupId);
            Wire.writeString(out, topic);
            Wire.writeString(out, memberId);
            Wire.writeString(out, clientId);
            out.writeInt(sessionTimeoutMillis);
        }

        public static JoinRequest decode(ByteBuf in) {
            String groupId = Wire.readRequiredString(in, "groupId");
            String topic = Wire.readRequiredString(in, "topic");
            String memberId = Wire.readString(in);
            String clientId = Wire.readRequiredString(in, "clientId");
            int session = Wire.readInt(in);
            if (session < 10) {
                throw new ProtocolException("sessionTimeoutMillis must be >= 10, got " + session);
            }
            Wire.expectEnd(in, "join group request");
            return new JoinRequest(groupId, topic, memberId, clientId, session);
        }
    }

    /** HEARTBEAT and LEAVE_GROUP requests share this layout. */
    public record MemberRequest(String groupId, String memberId) {
        public void encode(ByteBuf out) {
            Wire.writeString(out, groupId);
            Wire.writeString(out, memberId);
        }

        public static MemberRequest decode(ByteBuf in) {
            MemberRequest r = new MemberRequest(Wire.readRequiredString(in, "groupId"), Wire.readRequiredString(in, "memberId"));
            Wire.expectEnd(in, "member request");
            return r;
        }
    }

    public static void writeMembership(ByteBuf out, ConsumerGroups.Membership m) {
        Wire.writeString(out, m.memberId());
        out.writeInt(m.generation());
        out.writeInt(m.assignment().size());
        for (TopicPartition tp : new TreeSet<>(m.assignment())) {
            writePartition(out, tp);
        }
    }

    public static ConsumerGroups.Membership readMembership(ByteBuf in, String groupId) {
        String memberId = Wire.readRequiredString(in, "memberId");
        int generation = Wire.readInt(in);
        int count = Wire.readCount(in, 6, "partition");
        Set<TopicPartition> assignment = new TreeSet<>();
        for (int i = 0; i < count; i++) {
            assignment.add(readPartition(in));
        }
        return new ConsumerGroups.Membership(groupId, memberId, generation, assignment);
    }

    static void writePartition(ByteBuf out, TopicPartition tp) {
        Wire.writeString(out, tp.topic());
        out.writeInt(tp.partition());
    }

    static TopicPartition readPartition(ByteBuf in) {
        String topic = Wire.readRequiredString(in, "topic");
        int partition = Wire.readInt(in);
        if (partition < 0) {
            throw new ProtocolException("negative partition " + partition);
        }
        return new TopicPartition(topic, partition);
    }
}
