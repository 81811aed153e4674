package io.sluice.kafka.internal;

import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.Errors;

/**
 * InitProducerId for idempotent producers: a new producer id (never reused for the data directory, see
 * {@link ProducerIds}) at epoch 0; a producer that presents its id and epoch (KIP-360, after a sequence error) gets
 * the same id at the next epoch, or a new id when the epoch is exhausted. A transactional id is refused with
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED: Sluice has no transactions, and the client reports the error at once
 * instead of retrying. Runs on the admin thread (a new block of ids is synced to disk).
 */
final class InitProducerIdHandler implements ApiHandler {
    private final ListenerContext context;
    private final ProducerIds ids;

    InitProducerIdHandler(ListenerContext context, ProducerIds ids) {
        this.context = context;
        this.ids = ids;
    }

    @Override
    public void handle(KafkaRequest request) {
        InitProducerIdRequestData data = request.data();
        if (data.transactionalId() != null) {
            request.respond(new InitProducerIdResponseData().setProducerId(-1).setProducerEpoch((short) -1)
                    .setErrorCode(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code()));
            return;
        }
        context.admin().execute(() -> {
            try {
                long producerId;
                short epoch;
                if (data.producerId() >= 0 && data.producerEpoch() >= 0 && data.producerEpoch() < Short.MAX_VALUE - 1) {
                    producerId = data.producerId();
                    epoch = (short) (data.producerEpoch() + 1);
                } else {
                    producerId = ids.next();
                    epoch = 0;
                }
                request.respond(new InitProducerIdResponseData().setProducerId(producerId).setProducerEpoch(epoch));
            } catch (RuntimeException e) {
                request.fail(e);
            }
        });
    }
}
