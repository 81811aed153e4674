package io.sluice.kafka.internal;

import io.sluice.core.ClassicGroups;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.protocol.Errors;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;

/**
 * LeaveGroup: versions 0-2 name one member (its error is the response's), 3+ a batch (an error per member, NONE at
 * the top). A member named only by its group instance id is unknown: static membership is not kept.
 */
final class LeaveGroupHandler implements ApiHandler {
    private final ClassicGroups groups;
    private final Executor calls;

    LeaveGroupHandler(ClassicGroups groups, Executor calls) {
        this.groups = groups;
        this.calls = calls;
    }

    @Override
    public void handle(KafkaRequest request) {
        LeaveGroupRequestData data = request.data();
        short version = request.version();
        List<String> ids = new ArrayList<>();
        if (version < 3) {
            ids.add(data.memberId());
        } else {
            data.members().forEach(m -> ids.add(m.memberId()));
        }
        GroupApis.offLoop(request, calls, () -> {
            List<ClassicGroups.Error> errors = groups.leave(data.groupId(), ids);
            LeaveGroupResponseData response = new LeaveGroupResponseData();
            if (version < 3) {
                response.setErrorCode(errors.get(0).code());
            } else {
                List<LeaveGroupResponseData.MemberResponse> members = new ArrayList<>();
                for (int i = 0; i < ids.size(); i++) {
                    members.add(new LeaveGroupResponseData.MemberResponse().setMemberId(ids.get(i))
                            .setGroupInstanceId(data.members().get(i).groupInstanceId()).setErrorCode(errors.get(i).code()));
                }
                response.setErrorCode(Errors.NONE.code()).setMembers(members);
            }
            request.respond(response);
        });
    }
}
