package io.sluice.core.internal.client;

import io.sluice.core.Acks;
import io.sluice.core.EpochClock;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.core.internal.NamedThreadFactory;
import io.sluice.core.internal.bus.PartitionRing;
import io.sluice.records.RecordBatchWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * An embedded producer's open record batches, one per partition it sends to ({@link ProducerConfig#lingerMicros()}
 * above 0), as Kafka's {@code RecordAccumulator} keeps them: the sending thread encodes each record into its
 * partition's batch (Kafka RecordBatch v2, docs/journal-format.md) under that batch's lock, and a batch crosses the
 * partition ring as <em>one</em> slot ({@link PartitionRing#tryPublishBatch}), to be stored as one journal document.
 * A batch is published by the sending thread once it holds {@code batchSizeBytes}, by this producer's linger thread
 * once it is {@code lingerMicros} old, and by {@link #flush}. Each record's callback gets its own offset (the batch's
 * base offset plus its index).
 *
 * <p>Bounded: one open batch per partition. A batch the ring refuses (full ring or batch memory) stays closed to new
 * records, and {@link #append} reports {@link Producer#BACK_PRESSURED} without taking the record, until the linger
 * thread gets it in; one refused for longer than {@code maxBlockMillis} fails its records with a
 * {@link SluiceException.BackPressureException}. The linger thread parks without a timer while no batch is open.
 */
final class ProducerBatches implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerBatches.class);
    private static final long RETRY_NANOS = TimeUnit.MICROSECONDS.toNanos(100);
    private static final long MAX_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final EpochClock clock;
    private final Acks acks;
    private final int batchSizeBytes;
    private final long lingerNanos;
    private final long maxBlockNanos;
    private final ConcurrentHashMap<PartitionRing, OpenBatch> batches = new ConcurrentHashMap<>();
    private final Thread linger;
    /**
     * When the linger thread will next look at the batches ({@link System#nanoTime}); {@link Long#MAX_VALUE} while
     * it scans them and while it parks without a timer. A sender unparks it only when a batch it opened or saw
     * refused needs it sooner: the linger thread wakes about once per linger period, not once per batch.
     */
    private volatile long lingerWakeAt = Long.MAX_VALUE;
    private volatile boolean closed;

    /**
     * @param clock the time in milliseconds given to a record sent without one ({@link ProducerRecord#NO_TIMESTAMP}),
     *              read once the record's batch takes it
     */
    ProducerBatches(ProducerConfig config, EpochClock clock) {
        this.clock = clock;
        this.acks = config.acks();
        this.batchSizeBytes = config.batchSizeBytes();
        this.lingerNanos = TimeUnit.MICROSECONDS.toNanos(config.lingerMicros());
        this.maxBlockNanos = TimeUnit.MILLISECONDS.toNanos(config.maxBlockMillis());
        this.linger = new NamedThreadFactory("sluice-producer-linger").newThread(this::lingerLoop);
        linger.start();
    }

    /**
     * Adds the record to its partition's batch, with its own timestamp or, without one, the clock's time now. Never
     * blocks. A refused attempt costs no clock read: a sender spinning on back-pressure only checks the sealed batch.
     *
     * @return {@link Producer#ACCEPTED} (the callback will be called), {@link Producer#BACK_PRESSURED} (the
     *         partition's previous batch still waits for room: nothing was taken) or {@link Producer#CLOSED}
     */
    long append(PartitionRing ring, ProducerRecord record, SendCallback callback) {
        if (closed) {
            return Producer.CLOSED;
        }
        OpenBatch batch = batches.computeIfAbsent(ring, OpenBatch::new);
        synchronized (batch) {
            if (batch.sealed && batch.publish() != Producer.ACCEPTED) {
                return batch.count == 0 ? Producer.CLOSED : Producer.BACK_PRESSURED;
            }
            boolean first = batch.count == 0;
            long timestamp = record.timestamp() == ProducerRecord.NO_TIMESTAMP ? clock.epochMillis() : record.timestamp();
            batch.add(record, timestamp, callback);
            long due = Long.MAX_VALUE;
            if (batch.writer.size() >= batchSizeBytes) {
                if (batch.publish() == Producer.BACK_PRESSURED) {
                    due = batch.refusedSinceNanos + RETRY_NANOS; // a refused batch to retry (and to fail after maxBlockMillis)
                }
            } else if (first) {
                due = batch.openedNanos + lingerNanos; // a new deadline
            }
            if (due != Long.MAX_VALUE) {
                long wakeAt = lingerWakeAt;
                if (wakeAt == Long.MAX_VALUE || due - wakeAt < 0) {
                    LockSupport.unpark(linger);
                }
            }
        }
        return Producer.ACCEPTED;
    }

    /**
     * Publishes every open batch now, waiting up to {@code maxBlockMillis} for room in a full ring; a batch that does
     * not get in by then fails its records.
     */
    void flush() {
        for (OpenBatch batch : batches.values()) {
            synchronized (batch) {
                long deadline = System.nanoTime() + maxBlockNanos;
                long park = 1_000;
                while (batch.count > 0 && batch.publish() == Producer.BACK_PRESSURED) {
                    if (System.nanoTime() >= deadline) {
                        batch.failBackPressured();
                        break;
                    }
                    LockSupport.parkNanos(park);
                    park = Math.min(park * 2, 1_000_000);
                }
            }
        }
    }

    /** The linger thread: publishes batches that are {@code lingerNanos} old and retries refused ones. */
    private void lingerLoop() {
        while (!closed) {
            try {
                lingerOnce();
            } catch (RuntimeException e) { // not expected (callbacks are guarded): keep the batches moving
                LOG.error("producer linger thread: unexpected failure; continuing", e);
                LockSupport.parkNanos(RETRY_NANOS);
            }
        }
    }

    /**
     * One pass over the batches, then a park until the next deadline (or, with none, until a send unparks it). A batch
     * the ring keeps refusing is retried after {@link #RETRY_NANOS}, then at intervals doubling up to
     * {@link #MAX_RETRY_NANOS}: its sender retries it on each send too, and a full ring frees room only as fast as the
     * journal writer, which a linger thread waking every 100 µs would take CPU from.
     */
    private void lingerOnce() {
        lingerWakeAt = Long.MAX_VALUE; // senders from now on unpark this thread: it may not see their batch
        long now = System.nanoTime();
        long next = Long.MAX_VALUE;
        for (OpenBatch batch : batches.values()) {
            synchronized (batch) {
                if (batch.count == 0) {
                    continue;
                }
                if (!batch.sealed && now - batch.openedNanos < lingerNanos) {
                    next = Math.min(next, batch.openedNanos + lingerNanos);
                } else if (batch.publish() == Producer.BACK_PRESSURED) {
                    if (now - batch.refusedSinceNanos >= maxBlockNanos) {
                        batch.failBackPressured();
                    } else {
                        next = Math.min(next, now + batch.retryNanos);
                        batch.retryNanos = Math.min(batch.retryNanos * 2, MAX_RETRY_NANOS);
                    }
                }
            }
        }
        lingerWakeAt = next;
        if (next == Long.MAX_VALUE) {
            LockSupport.park(this); // the first record of a batch unparks it
        } else {
            LockSupport.parkNanos(this, next - now);
        }
    }

    /** Publishes what is open (as {@link #flush}) and stops the linger thread. */
    @Override
    public void close() {
        flush();
        closed = true;
        LockSupport.unpark(linger);
        try {
            linger.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (OpenBatch batch : batches.values()) { // sends that raced with close
            synchronized (batch) {
                batch.fail(new SluiceException.ClosedException("producer closed before the record's batch was published"));
            }
        }
    }

    /** One partition's batch. Guarded by its own monitor. */
    private final class OpenBatch {
        final PartitionRing ring;
        /** the batch being encoded, from index 0; grows to the largest batch, never shrinks */
        ByteBuffer bytes = ByteBuffer.allocate(4096);
        final RecordBatchWriter writer = new RecordBatchWriter();
        /** the sealed batch's size in bytes */
        int sealedLength;
        SendCallback[] callbacks = new SendCallback[64];
        int count;
        long openedNanos;
        /** Finished (header written) and refused by the ring: takes no more records until it is published. */
        boolean sealed;
        /** The sealed batch's callbacks, built once however often the ring refuses it. */
        Completion completion;
        long refusedSinceNanos;
        /** the linger thread's next wait before retrying this batch while the ring refuses it */
        long retryNanos = RETRY_NANOS;

        OpenBatch(PartitionRing ring) {
            this.ring = ring;
        }

        void add(ProducerRecord record, long timestamp, SendCallback callback) {
            if (count == 0) {
                writer.begin(bytes, 0);
                openedNanos = System.nanoTime();
            }
            byte[] key = record.key();
            byte[] value = record.value();
            try {
                int room = RecordBatchWriter.maxRecordSize(key == null ? -1 : key.length, value.length, record.headers());
                if (writer.remaining() < room) {
                    ByteBuffer grown = ByteBuffer.allocate(Math.max(writer.position() + room, bytes.capacity() * 2));
                    grown.put(0, bytes.array(), 0, writer.position());
                    bytes = grown;
                    writer.moveTo(grown);
                }
                writer.append(timestamp, key, key == null ? -1 : key.length, value, value.length, record.headers());
            } catch (RuntimeException e) {
                if (count == 0) {
                    writer.abandon();
                }
                throw e;
            }
            if (count == callbacks.length) {
                callbacks = Arrays.copyOf(callbacks, count * 2);
            }
            callbacks[count++] = callback;
        }

        /** Offers the batch to the ring: {@link Producer#ACCEPTED} (it is empty again), BACK_PRESSURED or CLOSED. */
        long publish() {
            if (count == 0) {
                return Producer.ACCEPTED;
            }
            if (!sealed) {
                sealedLength = writer.finish(0);
                sealed = true;
                completion = new Completion(Arrays.copyOf(callbacks, count));
                refusedSinceNanos = System.nanoTime();
            }
            long result = ring.tryPublishBatch(bytes, 0, sealedLength, count, acks, completion);
            if (result == Producer.ACCEPTED) {
                reset();
            } else if (result == Producer.CLOSED) {
                fail(new SluiceException.ClosedException("producer or broker is closed"));
            }
            return result;
        }

        void failBackPressured() {
            fail(new SluiceException.BackPressureException(ring.partition() + ": a record batch still found no room after maxBlockMillis="
                    + TimeUnit.NANOSECONDS.toMillis(maxBlockNanos)));
        }

        void fail(SluiceException error) {
            if (count > 0) {
                if (!sealed) {
                    writer.abandon();
                    completion = new Completion(Arrays.copyOf(callbacks, count));
                }
                completion.onCompletion(ring.partition().partition(), -1, error);
                reset();
            }
        }

        private void reset() {
            Arrays.fill(callbacks, 0, count, null);
            count = 0;
            sealed = false;
            completion = null;
            retryNanos = RETRY_NANOS;
        }
    }

    /** Hands the batch's outcome to each record's callback, with the record's own offset; one that throws is logged. */
    private record Completion(SendCallback[] callbacks) implements SendCallback {
        @Override
        public void onCompletion(int partition, long baseOffset, Throwable error) {
            for (int i = 0; i < callbacks.length; i++) {
                SendCallback cb = callbacks[i];
                if (cb != null) {
                    try {
                        cb.onCompletion(partition, error == null && baseOffset >= 0 ? baseOffset + i : -1, error);
                    } catch (RuntimeException e) {
                        LOG.warn("send callback threw; ignored so the batch's other records are told", e);
                    }
                }
            }
        }
    }
}
