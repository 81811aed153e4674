package io.sluice.core;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * An event read back from a partition, with its offset. Transport-neutral: a transport's own id of the event (a
 * Redis stream entry id) is exposed by that transport's consumer ({@code RedisStreamsConsumer.entryId(record)}).
 */
public record ConsumerRecord(String topic, int partition, long offset, long timestamp, byte[] key, byte[] value, List<Header> headers) {

    public String valueAsString() {
        return new String(value, StandardCharsets.UTF_8);
    }

    public String keyAsString() {
        return key == null ? null : new String(key, StandardCharsets.UTF_8);
    }

    public TopicPartition topicPartition() {
        return new TopicPartition(topic, partition);
    }
}
