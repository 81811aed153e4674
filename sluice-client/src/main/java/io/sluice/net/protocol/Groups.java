package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.sluice.core.ConsumerGroups;
import io.sluice.core.TopicPartition;

import java.util.Set;
import java.util.TreeSet;

/**
 * Consumer-group membership: JOIN_GROUP (v1), HEARTBEAT (v1) and LEAVE_GROUP (v0), mapped one to one onto core
 * {@link ConsumerGroups}.
 * <pre>
 * JOIN_GROUP request:  groupId string | topic string | memberId string (null: new member)
 *                      | generation int32 (-1: none) | clientId string | sessionTimeoutMillis int32
 * HEARTBEAT request:   groupId string | memberId string | generation int32
 * LEAVE_GROUP request: groupId string | memberId string
 *
 * JOIN_GROUP and HEARTBEAT response (membership):
 *   memberId string | generation int32 (-1: rebalance pending, join again) | assignment array of  topic string | partition int32
 * LEAVE_GROUP response: (empty)
 * </pre>
 * Refusals are error codes: {@code UNKNOWN_MEMBER} (join anew), {@code REBALANCE_IN_PROGRESS} (stop, rejoin),
 * {@code ILLEGAL_GENERATION} (rejoin), {@code FENCED_MEMBER} (join anew).
 */
public final class Groups {
    private Groups() {
    }

    public record JoinRequest(String groupId, String topic, String memberId, int generation, String clientId,
                              int sessionTimeoutMillis) {
        public void encode(ByteBuf out) {
            Wire.writeString(out, groupId);
            Wire.writeString(out, topic);
            Wire.writeString(out, memberId);
            out.writeInt(generation);
            Wire.writeString(out, clientId);
            out.writeInt(sessionTimeoutMillis);
        }

        public static JoinRequest decode(ByteBuf in) {
            String groupId = Wire.readRequiredString(in, "groupId");
            String topic = Wire.readRequiredString(in, "topic");
            String memberId = Wire.readString(in);
            int generation = readGeneration(in);
            String clientId = Wire.readRequiredString(in, "clientId");
            int session = Wire.readInt(in);
            if (session < 10) {
                throw new ProtocolException("sessionTimeoutMillis must be >= 10, got " + session);
            }
            Wire.expectEnd(in, "join group request");
            return new JoinRequest(groupId, topic, memberId, generation, clientId, session);
        }
    }

    /** HEARTBEAT request. */
    public record HeartbeatRequest(String groupId, String memberId, int generation) {
        public void encode(ByteBuf out) {
            Wire.writeString(out, groupId);
            Wire.writeString(out, memberId);
            out.writeInt(generation);
        }

        public static HeartbeatRequest decode(ByteBuf in) {
            HeartbeatRequest r = new HeartbeatRequest(Wire.readRequiredString(in, "groupId"),
                    Wire.readRequiredString(in, "memberId"), readGeneration(in));
            Wire.expectEnd(in, "heartbeat request");
            return r;
        }
    }

    static int readGeneration(ByteBuf in) {
        int generation = Wire.readInt(in);
        if (generation < ConsumerGroups.NO_GENERATION) {
            throw new ProtocolException("generation must be >= -1, got " + generation);
        }
        return generation;
    }

    /** LEAVE_GROUP request. */
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
