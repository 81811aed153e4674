package io.sluice.kafka.internal;

import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FindCoordinatorRequest;

import java.util.ArrayList;
import java.util.List;

/**
 * FindCoordinator: this broker coordinates every group (it is the only node). Versions 0-3 ask for one key, 4+ for a
 * batch. Transaction coordinators are refused (Sluice has no transactions) with TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
 * as InitProducerId refuses transactional ids; any other key type is an INVALID_REQUEST.
 */
final class FindCoordinatorHandler implements ApiHandler {
    private final ListenerContext context;

    FindCoordinatorHandler(ListenerContext context) {
        this.context = context;
    }

    @Override
    public void handle(KafkaRequest request) {
        FindCoordinatorRequestData data = request.data();
        Errors error = data.keyType() == FindCoordinatorRequest.CoordinatorType.GROUP.id() ? Errors.NONE
                : data.keyType() == FindCoordinatorRequest.CoordinatorType.TRANSACTION.id() ? Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
                : Errors.INVALID_REQUEST;
        FindCoordinatorResponseData response = new FindCoordinatorResponseData();
        if (request.version() < 4) {
            response.setErrorCode(error.code()).setErrorMessage(error == Errors.NONE ? null : error.message());
            if (error == Errors.NONE) {
                response.setNodeId(context.nodeId()).setHost(context.advertisedHost()).setPort(context.advertisedPort());
            } else {
                response.setNodeId(-1).setHost("").setPort(-1);
            }
        } else {
            List<FindCoordinatorResponseData.Coordinator> coordinators = new ArrayList<>();
            for (String key : data.coordinatorKeys()) {
                FindCoordinatorResponseData.Coordinator c = new FindCoordinatorResponseData.Coordinator().setKey(key)
                        .setErrorCode(error.code()).setErrorMessage(error == Errors.NONE ? null : error.message());
                if (error == Errors.NONE) {
                    c.setNodeId(context.nodeId()).setHost(context.advertisedHost()).setPort(context.advertisedPort());
                } else {
                    c.setNodeId(-1).setHost("").setPort(-1);
                }
                coordinators.add(c);
            }
            response.setCoordinators(coordinators);
        }
        request.respond(response);
    }
}
