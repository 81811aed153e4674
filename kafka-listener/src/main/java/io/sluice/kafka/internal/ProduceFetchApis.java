package io.sluice.kafka.internal;

/** The data-path rows of {@link KafkaApis}: Produce, Fetch, ListOffsets, CreateTopics, InitProducerId. */
final class ProduceFetchApis {
    private ProduceFetchApis() {
    }

    static void register(KafkaApis.Builder table, ListenerContext context) {
    }
}
