package io.sluice.kafka.internal;

import io.sluice.core.Broker;
import io.sluice.core.PartitionReader;
import io.sluice.core.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.DuplicateSequenceException;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Idempotent producers' state, per partition and producer id, checked as Kafka's ProducerStateManager does: the
 * epoch may only grow (an older one is INVALID_PRODUCER_EPOCH; a newer one starts again at sequence 0), a batch
 * whose sequences equal one of the producer's last {@link #CACHED_BATCHES} batches is a retry and gets that batch's
 * offsets without being stored again, an older one is DUPLICATE_SEQUENCE_NUMBER, and a gap is
 * OUT_OF_ORDER_SEQUENCE_NUMBER.
 *
 * <p>Durable without files of its own: stored batches keep producer id, epoch and base sequence in their headers,
 * so a partition's state is rebuilt from the tail of its journal (the last {@link #SCAN_RECORDS} records) the first
 * time a producer id touches it after a start, as Kafka rebuilds from its log. A producer retrying across a SIGKILL
 * therefore finds its acknowledged batches (acks ≥ 1: in the journal) and stores nothing twice.
 *
 * <p>Threads: connections of one producer may sit on several event loops and completions arrive on journal threads,
 * so each partition's state is guarded by its own monitor — held for a few map operations per produced batch, never
 * across I/O other than the one-time journal scan; the partitions map is concurrent.
 */
final class ProducerStates {
    static final int CACHED_BATCHES = 5;
    static final long SCAN_RECORDS = 1_000_000;
    /**
     * Producers remembered per partition, least recently used evicted first (Kafka expires them after
     * producer.id.expiration.ms): bounds the state however many producer ids clients make. An evicted producer that
     * comes back mid-sequence is refused OUT_OF_ORDER_SEQUENCE_NUMBER, and the Java client then starts a new epoch.
     */
    static final int MAX_PRODUCERS_PER_PARTITION = 10_000;

    private static final int BASE_OFFSET = 0;
    private static final int PRODUCER_ID = 43;
    private static final int PRODUCER_EPOCH = 51;
    private static final int BASE_SEQUENCE = 53;
    private static final int RECORDS_COUNT = 57;

    private final Broker broker;
    private final Map<TopicPartition, PartitionState> partitions = new ConcurrentHashMap<>();

    ProducerStates(Broker broker) {
        this.broker = broker;
    }

    /** A batch already stored (or being stored) for this producer: answer with its base offset once known. */
    record Duplicate(CompletableFuture<Long> baseOffset) {
    }

    /**
     * Checks a batch of an idempotent producer before it is appended.
     *
     * @return null: append it and report through {@link #appended}/{@link #failed} with the returned ticket; a
     *         {@link Duplicate}: do not append
     * @throws ApiException with the Kafka error when the batch is refused
     */
    Object check(TopicPartition tp, ProducedBatch batch) {
        PartitionState state = partitions.computeIfAbsent(tp, PartitionState::new);
        synchronized (state) {
            if (!state.loaded) {
                state.load(broker);
            }
            return state.check(batch);
        }
    }

    /** The batch {@code ticket} was stored at {@code baseOffset}. Any thread. */
    void appended(Object ticket, long baseOffset) {
        ((BatchEntry) ticket).baseOffset.complete(baseOffset);
    }

    /** The batch {@code ticket} was not stored: forget it, so a retry is appended. Any thread. */
    void failed(TopicPartition tp, long producerId, Object ticket, Throwable error) {
        BatchEntry entry = (BatchEntry) ticket;
        PartitionState state = partitions.get(tp);
        if (state != null) {
            synchronized (state) {
                ProducerEntry producer = state.producers.get(producerId);
                if (producer != null && producer.batches.remove(entry)) {
                    producer.lastSequence = producer.batches.isEmpty() ? entry.firstSequence - 1 : producer.batches.peekLast().lastSequence;
                }
            }
        }
        entry.baseOffset.completeExceptionally(error);
    }

    private static final class PartitionState {
        final TopicPartition tp;
        final Map<Long, ProducerEntry> producers = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, ProducerEntry> eldest) {
                return size() > MAX_PRODUCERS_PER_PARTITION;
            }
        };
        boolean loaded;

        PartitionState(TopicPartition tp) {
            this.tp = tp;
        }

        Object check(ProducedBatch batch) {
            ProducerEntry producer = producers.get(batch.producerId());
            int first = batch.baseSequence();
            int last = batch.lastSequence();
            if (producer == null || batch.producerEpoch() > producer.epoch) {
                if (first != 0) {
                    throw new OutOfOrderSequenceException("producer " + batch.producerId() + " epoch " + batch.producerEpoch()
                            + " starts at sequence " + first + " on " + tp + ", expected 0");
                }
                producer = new ProducerEntry(batch.producerEpoch());
                producers.put(batch.producerId(), producer);
            } else if (batch.producerEpoch() < producer.epoch) {
                throw new InvalidProducerEpochException("producer " + batch.producerId() + " epoch " + batch.producerEpoch()
                        + " is older than " + producer.epoch + " on " + tp);
            } else {
                for (BatchEntry cached : producer.batches) {
                    if (cached.firstSequence == first && cached.lastSequence == last) {
                        return new Duplicate(cached.baseOffset);
                    }
                }
                int expected = next(producer.lastSequence);
                if (first != expected) {
                    if (isBefore(first, expected)) {
                        throw new DuplicateSequenceException("producer " + batch.producerId() + " sequence " + first
                                + " on " + tp + " was stored before and is older than the last " + CACHED_BATCHES + " batches");
                    }
                    throw new OutOfOrderSequenceException("producer " + batch.producerId() + " sent sequence " + first
                            + " on " + tp + ", expected " + expected);
                }
            }
            BatchEntry entry = new BatchEntry(first, last, new CompletableFuture<>());
            producer.add(entry);
            return entry;
        }

        /** Rebuilds from the stored batches at the tail of the partition's journal. */
        void load(Broker broker) {
            loaded = true;
            long end = broker.endOffset(tp);
            long from = Math.max(broker.startOffset(tp), end - SCAN_RECORDS);
            if (from >= end) {
                return;
            }
            ByteBuffer[] holder = {ByteBuffer.allocate(64 << 10)};
            try (PartitionReader reader = broker.openReader(tp)) {
                reader.seek(from);
                while (reader.position() < end) {
                    holder[0].clear();
                    int bytes = reader.readBatches(1 << 20, length -> {
                        if (holder[0].remaining() < length) {
                            ByteBuffer bigger = ByteBuffer.allocate(Math.max(holder[0].capacity() * 2, holder[0].position() + length));
                            holder[0].flip();
                            bigger.put(holder[0]);
                            holder[0] = bigger;
                        }
                        return holder[0];
                    });
                    if (bytes == 0) {
                        break;
                    }
                    ByteBuffer buf = holder[0];
                    buf.flip();
                    while (buf.remaining() >= 61) {
                        int at = buf.position();
                        int length = buf.getInt(at + 8) + 12;
                        long producerId = buf.getLong(at + PRODUCER_ID);
                        if (producerId >= 0) {
                            loadBatch(producerId, buf.getShort(at + PRODUCER_EPOCH), buf.getInt(at + BASE_SEQUENCE),
                                    buf.getInt(at + RECORDS_COUNT), buf.getLong(at + BASE_OFFSET));
                        }
                        buf.position(at + length);
                    }
                }
            }
        }

        private void loadBatch(long producerId, short epoch, int baseSequence, int count, long baseOffset) {
            ProducerEntry producer = producers.get(producerId);
            if (producer == null || epoch > producer.epoch) {
                producer = new ProducerEntry(epoch);
                producers.put(producerId, producer);
            } else if (epoch < producer.epoch) {
                return;
            }
            int last = (int) ((baseSequence + (long) count - 1) % (Integer.MAX_VALUE + 1L));
            producer.add(new BatchEntry(baseSequence, last, CompletableFuture.completedFuture(baseOffset)));
        }

        private static int next(int sequence) {
            return sequence == Integer.MAX_VALUE ? 0 : sequence + 1;
        }

        /** True if {@code a} comes before {@code b} in sequence order (sequences wrap at Integer.MAX_VALUE). */
        private static boolean isBefore(int a, int b) {
            long diff = (long) b - a;
            return diff > 0 ? diff < (1L << 30) : diff < -(1L << 30);
        }
    }

    private static final class ProducerEntry {
        final short epoch;
        final ArrayDeque<BatchEntry> batches = new ArrayDeque<>(CACHED_BATCHES);
        int lastSequence = -1;

        ProducerEntry(short epoch) {
            this.epoch = epoch;
        }

        void add(BatchEntry entry) {
            if (batches.size() == CACHED_BATCHES) {
                batches.pollFirst();
            }
            batches.addLast(entry);
            lastSequence = entry.lastSequence;
        }
    }

    private record BatchEntry(int firstSequence, int lastSequence, CompletableFuture<Long> baseOffset) {
    }

}
