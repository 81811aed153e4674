package io.sluice.kafka.internal;

import io.sluice.core.ClassicGroups;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executor;

/**
 * SyncGroup: the leader hands in every member's assignment (opaque bytes); each member gets its own, the followers
 * once the leader's is in (a long-poll).
 */
final class SyncGroupHandler implements ApiHandler {
    private final ClassicGroups groups;
    private final Executor calls;

    SyncGroupHandler(ClassicGroups groups, Executor calls) {
        this.groups = groups;
        this.calls = calls;
    }

    @Override
    public void handle(KafkaRequest request) {
        SyncGroupRequestData data = request.data();
        Map<String, byte[]> assignments = new HashMap<>();
        data.assignments().forEach(a -> assignments.put(a.memberId(), a.assignment()));
        short version = request.version();
        GroupApis.offLoop(request, calls, () -> groups.sync(data.groupId(), data.generationId(), data.memberId(),
                version >= 5 ? data.protocolType() : null, version >= 5 ? data.protocolName() : null, assignments)
                .whenCompleteAsync((r, e) -> { // on the event loop, not under the coordinator's monitor
                    if (e != null) {
                        request.fail(e);
                    } else {
                        request.respond(new SyncGroupResponseData().setErrorCode(r.error().code())
                                .setProtocolType(version >= 5 ? r.protocolType() : null)
                                .setProtocolName(version >= 5 ? r.protocolName() : null)
                                .setAssignment(r.assignment()));
                    }
                }, request.eventLoop()));
    }
}
