package io.sluice.kafka.internal;

import io.sluice.core.ClassicGroups;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.protocol.Errors;

import java.util.concurrent.Executor;

/**
 * DescribeGroups: state, protocol type, the chosen protocol (while Stable) and the members with their metadata and
 * assignment bytes, as the members sent them. A group the broker does not know is Dead with no members, as in Kafka
 * (v6+ says GROUP_ID_NOT_FOUND).
 */
final class DescribeGroupsHandler implements ApiHandler {
    private final ClassicGroups groups;
    private final Executor calls;

    DescribeGroupsHandler(ClassicGroups groups, Executor calls) {
        this.groups = groups;
        this.calls = calls;
    }

    @Override
    public void handle(KafkaRequest request) {
        DescribeGroupsRequestData data = request.data();
        short version = request.version();
        GroupApis.offLoop(request, calls, () -> {
            DescribeGroupsResponseData response = new DescribeGroupsResponseData();
            for (String id : data.groups()) {
                ClassicGroups.Description d = groups.describeGroup(id);
                DescribeGroupsResponseData.DescribedGroup g = new DescribeGroupsResponseData.DescribedGroup().setGroupId(id)
                        .setGroupState(d.state()).setProtocolType(d.protocolType())
                        .setProtocolData(d.protocolName() == null ? "" : d.protocolName())
                        .setErrorCode(Errors.NONE.code());
                if ("Dead".equals(d.state()) && version >= 6) {
                    g.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage("group " + id + " not found");
                }
                for (ClassicGroups.MemberDescription m : d.members()) {
                    g.members().add(new DescribeGroupsResponseData.DescribedGroupMember().setMemberId(m.memberId())
                            .setGroupInstanceId(m.groupInstanceId()).setClientId(m.clientId() == null ? "" : m.clientId())
                            .setClientHost(m.clientHost() == null ? "" : m.clientHost())
                            .setMemberMetadata(m.metadata()).setMemberAssignment(m.assignment()));
                }
                response.groups().add(g);
            }
            request.respond(response);
        });
    }
}
