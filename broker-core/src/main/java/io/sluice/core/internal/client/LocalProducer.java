package io.sluice.core.internal.client;

import io.sluice.core.Acks;
import io.sluice.core.KeyPartitioner;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.RecordMetadata;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.core.internal.bus.PartitionRing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The embedded producer: resolves the partition and publishes straight onto its ring. Thread-safe and lock-free;
 * {@link #trySend} allocates nothing for {@link Acks#MEMORY} with a reused record and callback. With
 * {@link ProducerConfig#lingerMicros()} above 0 it batches instead: records go into their partition's record batch
 * ({@link ProducerBatches}), which crosses the ring as one slot.
 */
public final class LocalProducer implements Producer {

    /** A topic's rings, looked up once per send. */
    public record TopicRings(String topic, PartitionRing[] partitions, boolean journaled) {
    }

    /** What the producer needs from the broker: topic lookup and validation. */
    public interface Rings {
        /** @throws SluiceException.UnknownTopicException for an unknown topic */
        TopicRings rings(String topic);

        int maxEventSize();

        long nowMillis();

        boolean isClosed();

        /** Every topic's rings, for {@link LocalProducer#flush()}. */
        Iterable<TopicRings> allRings();
    }

    private final Rings rings;
    private final ProducerConfig config;
    private final AtomicInteger roundRobin = new AtomicInteger();
    /**
     * The rings of the topic sent to last (any thread; a racy cache, each read whole). Most producers send to one
     * topic, and looking the name up in the broker's map on every send was 18% of a journaled send's samples
     * (docs/benchmarks.md, issue 22 item 12). A deleted topic's rings answer {@link Producer#CLOSED}; the send then
     * looks the name up again, so it sees the topic gone, or the new topic of that name.
     */
    private volatile TopicRings lastTopic;
    /** null unless the config batches */
    private final ProducerBatches batches;
    private volatile boolean closed;

    public LocalProducer(Rings rings, ProducerConfig config) {
        this.rings = rings;
        this.config = config;
        this.batches = config.batching() ? new ProducerBatches(config, rings::nowMillis) : null;
    }

    @Override
    public CompletableFuture<RecordMetadata> send(ProducerRecord record) {
        CompletableFuture<RecordMetadata> future = new CompletableFuture<>();
        final long timestamp = record.timestamp() == ProducerRecord.NO_TIMESTAMP ? rings.nowMillis() : record.timestamp();
        ProducerRecord stamped = record.timestamp() == timestamp ? record : record.withTimestamp(timestamp);
        send(stamped, (partition, offset, error) -> {
            if (error != null) {
                future.completeExceptionally(error);
            } else {
                future.complete(new RecordMetadata(record.topic(), partition, offset, timestamp));
            }
        });
        return future;
    }

    @Override
    public void send(ProducerRecord record, SendCallback callback) {
        long deadline = 0; // set at the first refusal: a send that finds room reads no clock for it
        boolean refused = false;
        long park = 1_000;
        try {
            while (true) {
                long result = trySend(record, callback);
                if (result == ACCEPTED) {
                    return;
                }
                if (result == CLOSED) {
                    callback.onCompletion(-1, -1, new SluiceException.ClosedException("producer or broker is closed"));
                    return;
                }
                long now = System.nanoTime();
                if (!refused) {
                    refused = true;
                    deadline = now + TimeUnit.MILLISECONDS.toNanos(config.maxBlockMillis());
                }
                if (now - deadline >= 0) {
                    callback.onCompletion(-1, -1, new SluiceException.BackPressureException("topic '" + record.topic()
                            + "': partition ring still full after maxBlockMillis=" + config.maxBlockMillis()));
                    return;
                }
                LockSupport.parkNanos(park);
                park = Math.min(park * 2, 1_000_000);
            }
        } catch (SluiceException e) {
            callback.onCompletion(-1, -1, e);
        }
    }

    @Override
    public long trySend(ProducerRecord record, SendCallback callback) {
        if (closed || rings.isClosed()) {
            return CLOSED;
        }
        String topic = record.topic();
        TopicRings topicRings = lastTopic;
        boolean cached = topicRings != null && topicRings.topic().equals(topic);
        if (!cached) {
            topicRings = rings.rings(topic);
            lastTopic = topicRings;
        }
        long result = trySend(topicRings, record, callback);
        if (result == CLOSED && cached && !closed && !rings.isClosed()) {
            lastTopic = null; // the topic was deleted (maybe created again) since it was cached
            return trySend(rings.rings(topic), record, callback);
        }
        return result;
    }

    private long trySend(TopicRings topicRings, ProducerRecord record, SendCallback callback) {
        String topic = record.topic();
        int partitions = topicRings.partitions().length;
        Acks acks = config.acks();
        if (acks != Acks.MEMORY && !topicRings.journaled()) {
            throw SluiceException.InvalidConfigException.of("acks", acks,
                    "must be MEMORY for memory-only topic '" + topic + "'");
        }
        int size = record.serializedSize();
        if (size > rings.maxEventSize()) {
            throw new SluiceException.RecordTooLargeException("record of " + size + " bytes for topic '" + topic
                    + "' exceeds maxEventSize=" + rings.maxEventSize());
        }
        int partition = choosePartition(record, partitions);
        PartitionRing ring = topicRings.partitions()[partition];
        if (batches != null) {
            return batches.append(ring, record, callback); // reads the clock only if its batch takes the record
        }
        long timestamp = record.timestamp() == ProducerRecord.NO_TIMESTAMP ? rings.nowMillis() : record.timestamp();
        return ring.tryPublish(record.key(), record.value(), record.headers(), timestamp, acks, callback);
    }

    private int choosePartition(ProducerRecord record, int partitions) {
        Integer explicit = record.partition();
        if (explicit != null) {
            if (explicit < 0 || explicit >= partitions) {
                throw SluiceException.InvalidConfigException.of("partition", explicit,
                        "must be in [0, " + partitions + ") for topic '" + record.topic() + "'");
            }
            return explicit;
        }
        if (partitions == 1) {
            return 0;
        }
        if (record.key() != null && config.partitioner() == ProducerConfig.Partitioner.KEY_HASH) {
            return KeyPartitioner.partition(record.key(), partitions);
        }
        return (roundRobin.getAndIncrement() & 0x7fffffff) % partitions;
    }

    @Override
    public List<CompletableFuture<RecordMetadata>> sendBatch(List<ProducerRecord> records) {
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>(records.size());
        for (ProducerRecord r : records) {
            futures.add(send(r));
        }
        return futures;
    }

    /**
     * Publishes the open record batches (when batching) and waits until sends issued so far have completed, on every
     * ring ({@link PartitionRing#awaitCompleted}): nothing is counted per send for this (an in-flight counter on the
     * send path cost a contended update on the producer and on the journal thread per event, docs/benchmarks.md).
     * Sends of other producers published before the wait began extend it too; it is bounded by the time to drain one
     * ring per partition.
     */
    @Override
    public void flush() {
        if (batches != null) {
            batches.flush();
        }
        for (TopicRings topic : rings.allRings()) {
            for (PartitionRing ring : topic.partitions()) {
                ring.awaitCompleted(rings::isClosed);
            }
        }
    }

    @Override
    public void close() {
        if (!closed) {
            flush();
            closed = true;
            if (batches != null) {
                batches.close();
            }
        }
    }
}
