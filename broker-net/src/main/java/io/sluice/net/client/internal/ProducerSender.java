package io.sluice.net.client.internal;

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
import java.util.Iterator;
import java.util.LinkedHashMap;
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
    private final Map<TopicPartition, ProducerBatch> open = new LinkedHashMap<>();
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
     * Any thread: queues a record whose partition is resolved and whose {@code size} bytes of buffer memory were
     * acquired; the callback runs on the event loop.
     */
    public void append(ProducerRecord record, long timestamp, int size, SendCallback callback) {
        queue.add(new ProducerBatch.Entry(record, timestamp, size, callback));
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
        if (wakeUpPending.compareAndSet(false, true)) {
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
        TopicPartition tp = new TopicPartition(e.record().topic(), e.record().partition());
        ProducerBatch batch = open.get(tp);
        if (batch != null && batch.bytes + e.size() > batchSize) {
            open.remove(tp);
            ready.add(batch);
            batch = null;
        }
        if (batch == null) {
            batch = new ProducerBatch(this, tp, now);
            open.put(tp, batch);
        }
        batch.add(e);
    }

    private void arm(FlushMarker marker) {
        ready.addAll(open.values());
        open.clear();
        for (ProducerBatch b : ready) {
            marker.waitFor(b);
        }
        for (ProducerBatch b : inFlight) {
            marker.waitFor(b);
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
            c.write(ApiKey.PRODUCE, out -> b.encode(out, acks), batch);
            wrote = true;
        }
        if (wrote) {
            c.flush();
        }

        if (!open.isEmpty() && lingerNanos > 0 && !lingerTimerSet && inFlight.size() < maxInFlight) {
            long oldest = Long.MAX_VALUE;
            for (ProducerBatch b : open.values()) {
                oldest = Math.min(oldest, b.createdNanos);
            }
            lingerTimerSet = true;
            long delay = Math.max(0, oldest + lingerNanos - now);
            loop.schedule(() -> {
                lingerTimerSet = false;
                drain();
            }, delay, TimeUnit.NANOSECONDS);
        }
    }

    private ProducerBatch takeDueOpenBatch(long now) {
        Iterator<ProducerBatch> it = open.values().iterator();
        while (it.hasNext()) {
            ProducerBatch b = it.next();
            if (lingerNanos == 0 || now - b.createdNanos >= lingerNanos) {
                it.remove();
                return b;
            }
        }
        return null;
    }

    /** Called by a batch once its response (or error) was handled. */
    void finished(ProducerBatch batch, SluiceException error) {
        if (!inFlight.remove(batch)) {
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
