package io.sluice.ingest;

import io.sluice.ingest.internal.KafkaTopicConsumer;

import java.util.Map;

/**
 * Kafka as the source of an ingest pipeline ({@code ingest.<name>.source=kafka}, {@code sluice ingest --source
 * kafka}): the pipeline reads a Kafka topic as a member of a Kafka consumer group ({@code kafka-clients}) and lands
 * it with the offset-range strategy under the same rule as a Sluice topic: offset-range batches per partition, the
 * offset columns {@code _sluice_partition}/{@code _sluice_offset} filled with the Kafka partition and offset, and
 * the group's committed Kafka offsets moved only over ranges that are in ClickHouse.
 *
 * <p>Settings Sluice fixes on the Kafka consumer: {@code enable.auto.commit=false} (Sluice commits),
 * {@code isolation.level=read_committed} (aborted transactional writes are never landed),
 * {@code auto.offset.reset=earliest} for a new group, byte-array deserializers, {@code max.poll.records} and
 * {@code fetch.max.bytes} from the pipeline's batch bounds.
 */
public final class KafkaSource {
    private KafkaSource() {
    }

    /** Consumers of the Kafka cluster at {@code bootstrap} ({@code host:port[,host:port...]}). */
    public static ConsumerFactory consumers(String bootstrap) {
        return consumers(bootstrap, Map.of());
    }

    /** As {@link #consumers(String)} with extra Kafka consumer properties (security, timeouts); Sluice's fixed ones win. */
    public static ConsumerFactory consumers(String bootstrap, Map<String, Object> overrides) {
        return config -> new KafkaTopicConsumer(bootstrap, config, overrides);
    }
}
