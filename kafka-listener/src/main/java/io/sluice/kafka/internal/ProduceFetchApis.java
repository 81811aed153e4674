package io.sluice.kafka.internal;

import org.apache.kafka.common.protocol.ApiKeys;

/**
 * The data-path rows of {@link KafkaApis}: Produce, Fetch, ListOffsets, CreateTopics, InitProducerId.
 *
 * <ul>
 * <li>Produce 3..12, advertised from 0: librdkafka turns compression on only when the range includes v0 (it then
 *     sends v3+); v13 addresses topics by id, which the listener does not resolve.
 * <li>Fetch 4..12: v13+ address topics by id.
 * </ul>
 */
final class ProduceFetchApis {
    private ProduceFetchApis() {
    }

    static void register(KafkaApis.Builder table, ListenerContext context) {
        ProducerStates producers = new ProducerStates(context.broker());
        ProducerIds ids = new ProducerIds(context.broker().config().dataDir().resolve("kafka"));
        table.add(ApiKeys.PRODUCE, 0, 3, 12, false, new ProduceHandler(context, producers))
                .add(ApiKeys.FETCH, 4, 12, false, new FetchHandler(context))
                .add(ApiKeys.LIST_OFFSETS, 1, 10, false, new ListOffsetsHandler(context))
                .add(ApiKeys.CREATE_TOPICS, 2, 7, false, new CreateTopicsHandler(context))
                .add(ApiKeys.INIT_PRODUCER_ID, 0, 5, false, new InitProducerIdHandler(context, ids));
    }
}
