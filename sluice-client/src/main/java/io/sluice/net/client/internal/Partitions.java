package io.sluice.net.client.internal;

import io.sluice.core.KeyPartitioner;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.RecordMetadata;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/** What the network producers share about a send: the partition a record goes to, and the future it completes. */
public final class Partitions {
    private Partitions() {
    }

    /**
     * The record's partition among {@code count}: its own, else its key's (Kafka's murmur2, as the embedded producer
     * picks it) with {@code KEY_HASH}, else the next in turn.
     *
     * @throws SluiceException {@code INVALID_REQUEST} for a partition the topic does not have
     */
    public static int choose(ProducerRecord record, int count, ProducerConfig.Partitioner partitioner, AtomicInteger roundRobin) {
        Integer explicit = record.partition();
        if (explicit != null) {
            if (explicit < 0 || explicit >= count) {
                throw new SluiceException(SluiceException.Code.INVALID_REQUEST, "partition " + explicit + " does not exist: topic '"
                        + record.topic() + "' has " + count + " partitions");
            }
            return explicit;
        }
        if (record.key() != null && partitioner == ProducerConfig.Partitioner.KEY_HASH) {
            return KeyPartitioner.partition(record.key(), count);
        }
        return (roundRobin.getAndIncrement() & 0x7fffffff) % count;
    }

    /** A callback that completes {@code future} with the record's metadata, or with the send's error. */
    public static SendCallback completing(CompletableFuture<RecordMetadata> future, String topic, long timestamp) {
        return (partition, offset, error) -> {
            if (error != null) {
                future.completeExceptionally(error);
            } else {
                future.complete(new RecordMetadata(topic, partition, offset, timestamp));
            }
        };
    }

    /** The record's timestamp, or now when it has none. */
    public static long timestampOf(ProducerRecord record) {
        return record.timestamp() == ProducerRecord.NO_TIMESTAMP ? System.currentTimeMillis() : record.timestamp();
    }
}
