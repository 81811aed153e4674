package io.sluice.net.client.internal;

import io.netty.channel.EventLoop;
import io.sluice.core.Acks;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.RecordBatchWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The producer's batching and sending, run on its single event loop (single writer: all fields below are confined
 * to it). Application threads only append to {@link #queue} and call {@link #wakeUp()}.
 *
 * <p>Smart batching: each drain takes everything queued, appends it to per-partition batches, and sends batches while
 * fewer than {@code maxInFlightRequests} are unanswered. With {@code linger = 0} a batch goes out as soon as there is
 * room in flight, so an idle producer sends at once and a busy one naturally sends bigger batches; a positive linger
 * holds a batch that is not full until it is that old. One socket flush per drain.
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
    /** Application threads → event loop: {@link ProducerBatch.Entry} or {@link FlushMarker}, in send order. */
    private final Queue<Object> queue = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final AtomicBoolean wakeUpPending = new AtomicBoolean();
    /** Open batch per partition, indexed by topic then partition (no key object allocated per record). */
    private final Map<String, ProducerBatch[]> openByTopic = new HashMap<>();
    /** The same open batches, in the order they were opened (oldest first). */
    private final ArrayDeque<ProducerBatch> open = new ArrayDeque<>();
    private final ArrayDeque<ProducerBatch> ready = new ArrayDeque<>();
    private final ArrayDeque<ProducerBatch> inFlight = new ArrayDeque<>();
    private boolean lingerTimerSet;
    /** True while {@link #sendDue} runs: completions inside it must not re-enter it. */
    private boolean sending;
    private final Runnable drain = this::drain;
    private final RecordBatchWriter batchWriter = new RecordBatchWriter();

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
     * Any thread: queues a record whose partition is resolved and whose {@code size} bytes of buffer memory were
     * acquired; the callback runs on the event loop.
     */
    public void append(ProducerRecord record, int partition, long timestamp, int size, SendCallback callback) {
        queue.add(new ProducerBatch.Entry(record, partition, timestamp, size, callback));
        wakeUp();
    }

    /** Any thread: completes once everything appended before it was acknowledged or failed. */
    public CompletableFuture<Void> flushMarker() {
        FlushMarker marker = new FlushMarker();
        queue.add(marker);
        wakeUp();
        return marker.done;
    }

    /** Makes sure a drain runs after the last enqueue (at most one pending wake-up). */
    private void wakeUp() {
        // read first: under load a wake-up is already pending and a failed CAS would still bounce the cache line
        if (!wakeUpPending.get() && wakeUpPending.compareAndSet(false, true)) {
            loop.execute(drain);
        }
    }

    private void drain() {
        wakeUpPending.set(false);
        long now = System.nanoTime();
        Object item;
        while ((item = queue.poll()) != null) {
            if (item instanceof ProducerBatch.Entry e) {
                append(e, now);
            } else {
                arm((FlushMarker) item);
            }
        }
        sendDue(now);
    }

    private void append(ProducerBatch.Entry e, long now) {
        String topic = e.record().topic();
        int partition = e.partition();
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
        if (batch != null && batch.bytes + e.size() > batchSize) {
            close(batch);
            ready.add(batch);
            batch = null;
        }
        if (batch == null) {
            batch = new ProducerBatch(this, new TopicPartition(topic, partition), now);
            batches[partition] = batch;
            open.add(batch);
        }
        batch.add(e);
    }

    /** Removes a batch from the open set: no more records join it. */
    private void close(ProducerBatch batch) {
        openByTopic.get(batch.partition.topic())[batch.partition.partition()] = null;
        open.remove(batch);
    }

    private void arm(FlushMarker marker) {
        ProducerBatch b;
        while ((b = open.peek()) != null) {
            close(b);
            ready.add(b);
        }
        for (ProducerBatch r : ready) {
            marker.waitFor(r);
        }
        for (ProducerBatch f : inFlight) {
            marker.waitFor(f);
        }
        marker.armed();
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
                batch = takeDueOpenBatch(now);
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
            c.write(ApiKey.PRODUCE, out -> b.encode(out, acks, batchWriter), batch, b.bytes + 64 + 2 * b.partition.topic().length());
            wrote = true;
        }
        if (wrote) {
            c.flush();
        }

        if (!open.isEmpty() && lingerNanos > 0 && !lingerTimerSet && inFlight.size() < maxInFlight) {
            long oldest = open.peek().createdNanos;
            lingerTimerSet = true;
            long delay = Math.max(0, oldest + lingerNanos - now);
            loop.schedule(() -> {
                lingerTimerSet = false;
                drain();
            }, delay, TimeUnit.NANOSECONDS);
        }
    }

    /** The oldest open batch if it is due (open batches are in creation order, so only the head can be). */
    private ProducerBatch takeDueOpenBatch(long now) {
        ProducerBatch b = open.peek();
        if (b != null && (lingerNanos == 0 || now - b.createdNanos >= lingerNanos)) {
            close(b);
            return b;
        }
        return null;
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
