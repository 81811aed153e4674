package io.sluice.core;

/**
 * Where an acknowledged event went.
 *
 * @param offset the event's dense offset in its partition, or -1 for {@link Acks#MEMORY} (not yet journaled when acknowledged)
 */
public record RecordMetadata(String topic, int partition, long offset, long timestamp) {
}
