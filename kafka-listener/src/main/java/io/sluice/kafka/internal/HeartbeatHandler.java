package io.sluice.kafka.internal;

import io.sluice.core.ClassicGroups;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.HeartbeatResponseData;

import java.util.concurrent.Executor;

/**
 * Heartbeat: keeps the member's session; REBALANCE_IN_PROGRESS tells it to rejoin, UNKNOWN_MEMBER_ID that its
 * session expired, ILLEGAL_GENERATION that its generation is over.
 */
final class HeartbeatHandler implements ApiHandler {
    private final ClassicGroups groups;
    private final Executor calls;

    HeartbeatHandler(ClassicGroups groups, Executor calls) {
        this.groups = groups;
        this.calls = calls;
    }

    @Override
    public void handle(KafkaRequest request) {
        HeartbeatRequestData data = request.data();
        GroupApis.offLoop(request, calls, () -> request.respond(new HeartbeatResponseData()
                .setErrorCode(groups.heartbeat(data.groupId(), data.generationId(), data.memberId()).code())));
    }
}
