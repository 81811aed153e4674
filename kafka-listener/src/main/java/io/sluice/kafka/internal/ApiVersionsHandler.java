package io.sluice.kafka.internal;

import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiVersionsRequest;

/**
 * ApiVersions: the versions of every row of {@link KafkaApis}, nothing else. (A version above the row's highest is
 * answered by {@link KafkaConnection} in the v0 layout with UNSUPPORTED_VERSION, as Kafka does.)
 */
final class ApiVersionsHandler implements ApiHandler {
    private final ListenerContext context;

    ApiVersionsHandler(ListenerContext context) {
        this.context = context;
    }

    @Override
    public void handle(KafkaRequest request) {
        ApiVersionsRequest apiVersions = request.request();
        if (request.version() >= 3 && !apiVersions.isValid()) {
            // client software name/version outside [a-zA-Z0-9._-]: Kafka answers INVALID_REQUEST
            request.respond(new ApiVersionsResponseData().setErrorCode(Errors.INVALID_REQUEST.code())
                    .setApiKeys(context.apis().advertised()));
            return;
        }
        request.respond(new ApiVersionsResponseData()
                .setErrorCode(Errors.NONE.code())
                .setApiKeys(context.apis().advertised()));
    }
}
