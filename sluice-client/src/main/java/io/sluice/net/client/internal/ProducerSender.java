package io.sluice.net.client.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.sluice.core.Acks;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.net.protocol.ApiKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The producer's record accumulator and sender. Application threads encode each record straight into its partition's
 * open batch ({@link #append}, under {@link #lock}; as Kafka's {@code RecordAccumulator} does), so the event loop only
 * moves whole batches: no per-record object or queue node crosses threads. The single event loop owns what is ready
 * and in flight (all other fields below are confined to it).
 *
 * <p>Smart batching: each drain takes the closed batches, and sends batches (open ones too, once due) while fewer than
 * {@code maxInFlightRequests} are unanswered. With {@code linger = 0} a batch goes out as soon as there is room in
 * flight, so an idle producer sends at once and a busy one naturally sends bigger batches; a positive linger holds a
 * batch that is not full until it is that old. One socket flush per drain.
 */
public final class ProducerSender {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerSender.class);

    private final EventLoop loop;
    private final Acks acks;
    private final int batchSize;
    private final long lingerNanos;
    private final int maxInFlight;
    private final long requestTimeoutNanos;
    private final BufferMemory memory;
    private final Supplier<ClientConnection> connection;
    private final AtomicBoolean wakeUpPending = new AtomicBoolean();

    /** Guards the open batches, the closed ones not yet taken by the event loop, and pending flush markers. */
    private final Object lock = new Object();
    /** Open batch per partition, indexed by topic then partition (no key object allocated per record). */
    private final Map<String, ProducerBatch[]> openByTopic = new HashMap<>();
    /** The same open batches, in the order they were opened (oldest first). */
    private final ArrayDeque<ProducerBatch> open = new ArrayDeque<>();
    /** Batches closed by a full batch (application threads), for the event loop to send. */
    private final ArrayDeque<ProducerBatch> closed = new ArrayDeque<>();
    private final List<FlushMarker> pendingMarkers = new ArrayList<>();
    /**
     * Encoding buffers of batches already sent, for the next ones: plain heap buffers go round instead of one
     * allocation per batch (a pooled allocation from an application thread cost 12% of the producer in a profile).
     */
    private final ArrayDeque<ByteBuf> spareBuffers = new ArrayDeque<>();
    private long spareBytes;
    /** Records in the last batch closed full: sizes the next batch's callback array. */
    private int lastBatchRecords;

    private final ArrayDeque<ProducerBatch> ready = new ArrayDeque<>();
    private final ArrayDeque<ProducerBatch> inFlight = new ArrayDeque<>();
    private boolean lingerTimerSet;
    /** True while {@link #sendDue} runs: completions inside it must not re-enter it. */
    private boolean sending;
    private final Runnable drain = this::drain;

    public ProducerSender(EventLoop loop, Acks acks, int batchSize, long lingerMicros, int maxInFlight,
                          long requestTimeoutMillis, BufferMemory memory, Supplier<ClientConnection> connection) {
        this.loop = loop;
        this.acks = acks;
        this.batchSize = batchSize;
        this.lingerNanos = TimeUnit.MICROSECONDS.toNanos(lingerMicros);
        this.maxInFlight = maxInFlight;
        this.requestTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(requestTimeoutMillis);
        this.memory = memory;
        this.connection = connection;
        loop.scheduleWithFixedDelay(this::expireStuckRequests, 1, 1, TimeUnit.SECONDS);
    }

    /**
     * Any thread: encodes a record whose partition is resolved and whose {@code size} bytes of buffer memory were
     * acquired into its partition's open batch; the callback runs on the event loop.
     */
    public void append(ProducerRecord record, int partition, long timestamp, int size, SendCallback callback) {
        String topic = record.topic();
        synchronized (lock) {
            ProducerBatch[] batches = openByTopic.get(topic);
            if (batches == null || batches.length <= partition) {
                ProducerBatch[] grown = new ProducerBatch[partition + 1];
                if (batches != null) {
                    System.arraycopy(batches, 0, grown, 0, batches.length);
                }
                batches = grown;
                openByTopic.put(topic, batches);
            }
            ProducerBatch batch = batches[partition];
            if (batch != null && batch.bytes + size > batchSize) {
                lastBatchRecords = batch.recordCount();
                closeLocked(batch);
                closed.add(batch);
                batch = null;
            }
            if (batch == null) {
                ByteBuf buffer = spareBuffers.poll();
                if (buffer != null) {
                    spareBytes -= buffer.capacity();
                }
                batch = new ProducerBatch(this, new TopicPartition(topic, partition), System.nanoTime(),
                        buffer != null ? buffer.clear() : Unpooled.buffer(Math.min(4096, batchSize + 256)), lastBatchRecords);
                batches[partition] = batch;
                open.add(batch);
            }
            batch.add(record, timestamp, size, callback);
        }
        wakeUp();
    }

    /** Any thread: completes once everything appended before it was acknowledged or failed. */
    public CompletableFuture<Void> flushMarker() {
        FlushMarker marker = new FlushMarker();
        synchronized (lock) {
            pendingMarkers.add(marker);
        }
        wakeUp();
        return marker.done;
    }

    /** Makes sure a drain runs after the last append (at most one pending wake-up). */
    private void wakeUp() {
        // read first: under load a wake-up is already pending and a failed CAS would still bounce the cache line
        if (!wakeUpPending.get() && wakeUpPending.compareAndSet(false, true)) {
            loop.execute(drain);
        }
    }

    private void drain() {
        wakeUpPending.set(false);
        List<FlushMarker> markers = null;
        synchronized (lock) {
            ready.addAll(closed);
            closed.clear();
            if (!pendingMarkers.isEmpty()) {
                // a flush forces every open batch out, ignoring linger; taken under the lock with the markers, so a
                // marker covers exactly what was appended before it (and possibly a little more)
                markers = new ArrayList<>(pendingMarkers);
                pendingMarkers.clear();
                ProducerBatch b;
                while ((b = open.peek()) != null) {
                    closeLocked(b);
                    ready.add(b);
                }
            }
        }
        if (markers != null) {
            for (FlushMarker marker : markers) {
                for (ProducerBatch r : ready) {
                    marker.waitFor(r);
                }
                for (ProducerBatch f : inFlight) {
                    marker.waitFor(f);
                }
                marker.armed();
            }
        }
        sendDue(System.nanoTime());
    }

    /** A sent (or failed) batch's encoding buffer, kept for reuse unless oversized or beyond the buffer memory. */
    void giveBack(ByteBuf buffer) {
        synchronized (lock) {
            // as Kafka's BufferPool: kept up to the producer's buffer memory, which already bounds the records waiting
            // in batches, so a sender that runs ahead of the broker reuses buffers instead of allocating its backlog
            if (buffer.capacity() <= 2 * batchSize + 4096 && spareBytes + buffer.capacity() <= memory.capacity()) {
                spareBuffers.add(buffer);
                spareBytes += buffer.capacity();
            }
        }
    }

    /** Removes a batch from the open set and finishes its encoding: no more records join it. Under the lock. */
    private void closeLocked(ProducerBatch batch) {
        openByTopic.get(batch.partition.topic())[batch.partition.partition()] = null;
        open.remove(batch);
        batch.close();
    }

    private void sendDue(long now) {
        if (sending) {
            return;
        }
        sending = true;
        try {
            sendDueBatches(now);
        } finally {
            sending = false;
        }
    }

    private void sendDueBatches(long now) {
        ClientConnection c = null;
        boolean wrote = false;
        while (inFlight.size() < maxInFlight) {
            ProducerBatch batch = ready.poll();
            if (batch == null) {
                batch = takeClosedOrDueOpenBatch(now);
                if (batch == null) {
                    break;
                }
            }
            if (c == null) {
                c = connection.get();
            }
            batch.sentNanos = now;
            inFlight.add(batch);
            if (c == null) {
                batch.onError(new SluiceException.ClosedException("not connected to the broker"));
                continue;
            }
            ProducerBatch b = batch;
            c.write(ApiKey.PRODUCE, out -> b.encode(out, acks), batch, b.encodedSize() + 64 + 3 * b.partition.topic().length());
            wrote = true;
        }
        if (wrote) {
            c.flush();
        }

        long oldest;
        synchronized (lock) {
            oldest = open.isEmpty() ? -1 : open.peek().createdNanos;
        }
        if (oldest >= 0 && lingerNanos > 0 && !lingerTimerSet && inFlight.size() < maxInFlight) {
            lingerTimerSet = true;
            long delay = Math.max(0, oldest + lingerNanos - now);
            loop.schedule(() -> {
                lingerTimerSet = false;
                drain();
            }, delay, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * The next batch to send once {@link #ready} is empty: a batch the application threads closed, else the oldest open
     * batch if it is due (open batches are in creation order, so only the head can be). Closed batches go first: a
     * partition's closed batch is older than its open one, and sending the open one first would store the partition's
     * records out of send order.
     */
    private ProducerBatch takeClosedOrDueOpenBatch(long now) {
        synchronized (lock) {
            if (!closed.isEmpty()) {
                ready.addAll(closed);
                closed.clear();
                return ready.poll();
            }
            ProducerBatch b = open.peek();
            if (b != null && (lingerNanos == 0 || now - b.createdNanos >= lingerNanos)) {
                closeLocked(b);
                return b;
            }
            return null;
        }
    }

    /** Called by a batch once its response (or error) was handled. */
    void finished(ProducerBatch batch, SluiceException error) {
        // responses come back in request order, so the finished batch is almost always the oldest
        if (inFlight.peek() == batch) {
            inFlight.poll();
        } else if (!inFlight.remove(batch)) {
            LOG.warn("finished batch for {} was not in flight", batch.partition);
        }
        memory.release(batch.bytes);
        batch.releaseMarkers();
        sendDue(System.nanoTime());
    }

    /** A broker that stops answering without closing the socket: close it so every pending batch fails. */
    private void expireStuckRequests() {
        ProducerBatch oldest = inFlight.peek();
        if (oldest != null && System.nanoTime() - oldest.sentNanos > requestTimeoutNanos) {
            ClientConnection c = connection.get();
            LOG.warn("no produce answer for {} ms from {}: closing the connection", TimeUnit.NANOSECONDS.toMillis(requestTimeoutNanos),
                    c == null ? "broker" : c.peer());
            if (c != null) {
                c.close();
            }
        }
    }
}
