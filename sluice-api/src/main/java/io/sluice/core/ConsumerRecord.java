package io.sluice.core;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * An event read back from a partition, with its dense offset.
 *
 * @param entryId the transport's own id of the event when it has one ({@code "1718000000000-3"} for a Redis stream
 *                entry read through {@code io.sluice.redis.RedisStreamsConsumer}), otherwise {@code null}
 */
public record ConsumerRecord(String topic, int partition, long offset, long timestamp, byte[] key, byte[] value, List<Header> headers,
                             String entryId) {

    /** A record without a transport entry id (embedded and network consumers). */
    public ConsumerRecord(String topic, int partition, long offset, long timestamp, byte[] key, byte[] value, List<Header> headers) {
        this(topic, partition, offset, timestamp, key, value, headers, null);
    }

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
