package io.sluice.kafka.internal;

import io.sluice.core.ClassicGroups;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.protocol.Errors;

import java.util.concurrent.Executor;

/**
 * ListGroups: every group of the broker — Kafka groups with their protocol type ("consumer"), Sluice's own groups
 * as protocol type "sluice" (Kafka's admin tools list only "consumer" and "" as consumer groups), and groups known
 * only by their committed offsets as Empty with protocol type "". All are of group type "classic"; the state (v4+)
 * and type (v5+) filters apply, case-insensitively.
 */
final class ListGroupsHandler implements ApiHandler {
    private final ClassicGroups groups;
    private final Executor calls;

    ListGroupsHandler(ClassicGroups groups, Executor calls) {
        this.groups = groups;
        this.calls = calls;
    }

    @Override
    public void handle(KafkaRequest request) {
        ListGroupsRequestData data = request.data();
        GroupApis.offLoop(request, calls, () -> {
            ListGroupsResponseData response = new ListGroupsResponseData().setErrorCode(Errors.NONE.code());
            for (ClassicGroups.Listing g : groups.groupListings()) {
                if (!data.statesFilter().isEmpty() && data.statesFilter().stream().noneMatch(s -> s.equalsIgnoreCase(g.state()))) {
                    continue;
                }
                if (!data.typesFilter().isEmpty() && data.typesFilter().stream().noneMatch(t -> t.equalsIgnoreCase("classic"))) {
                    continue;
                }
                response.groups().add(new ListGroupsResponseData.ListedGroup().setGroupId(g.groupId())
                        .setProtocolType(g.protocolType()).setGroupState(g.state()).setGroupType("classic"));
            }
            request.respond(response);
        });
    }
}
