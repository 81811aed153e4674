package io.sluice.kafka.internal;

import io.sluice.core.ClassicGroups;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;

/**
 * JoinGroup, a long-poll: answered when the rebalance it takes part in completes (every known member rejoined, or the
 * rebalance timeout removed those that did not). The leader's answer carries every member's protocol metadata; the
 * broker never reads it. v4+ first answers MEMBER_ID_REQUIRED with the id to join with. Version 0 has no rebalance
 * timeout: the session timeout stands in, as in Kafka. A group instance id (static membership) is accepted but the
 * member is treated as dynamic.
 */
final class JoinGroupHandler implements ApiHandler {
    private final ClassicGroups groups;
    private final Executor calls;

    JoinGroupHandler(ClassicGroups groups, Executor calls) {
        this.groups = groups;
        this.calls = calls;
    }

    @Override
    public void handle(KafkaRequest request) {
        JoinGroupRequestData data = request.data();
        List<ClassicGroups.Protocol> protocols = new ArrayList<>();
        data.protocols().forEach(p -> protocols.add(new ClassicGroups.Protocol(p.name(), p.metadata())));
        int rebalanceTimeout = request.version() == 0 ? data.sessionTimeoutMs() : data.rebalanceTimeoutMs();
        ClassicGroups.JoinRequest join = new ClassicGroups.JoinRequest(data.groupId(), data.memberId(),
                data.groupInstanceId(), data.protocolType(), protocols, data.sessionTimeoutMs(), rebalanceTimeout,
                request.clientId(), String.valueOf(request.remoteAddress()),
                request.version() >= 4 && data.groupInstanceId() == null); // Kafka: static members skip the handshake
        // answered on the connection's event loop: the future may complete under the coordinator's monitor
        GroupApis.offLoop(request, calls, () -> groups.join(join).whenCompleteAsync((r, e) -> {
            if (e != null) {
                request.fail(e);
            } else {
                request.respond(response(r, request.version()));
            }
        }, request.eventLoop()));
    }

    static JoinGroupResponseData response(ClassicGroups.JoinResult r, short version) {
        List<JoinGroupResponseData.JoinGroupResponseMember> members = new ArrayList<>();
        for (ClassicGroups.MemberMetadata m : r.members()) {
            members.add(new JoinGroupResponseData.JoinGroupResponseMember().setMemberId(m.memberId())
                    .setGroupInstanceId(m.groupInstanceId()).setMetadata(m.metadata()));
        }
        String protocolName = r.protocolName() != null || version >= 7 ? r.protocolName() : "";
        return new JoinGroupResponseData().setErrorCode(r.error().code()).setGenerationId(r.generation())
                .setProtocolType(version >= 7 ? r.protocolType() : null).setProtocolName(protocolName)
                .setLeader(r.leaderId() == null ? "" : r.leaderId()).setMemberId(r.memberId() == null ? "" : r.memberId())
                .setMembers(members);
    }
}
