package io.sluice.net.server.internal;

import io.sluice.core.Producer;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.net.protocol.Produce;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One PRODUCE request: hands its records to the core producer with {@code trySend} (never blocking the event loop)
 * and answers once every record was acknowledged at the requested durability.
 *
 * <p>When the partition ring is full, the operation becomes the connection's barrier: the connection stops reading
 * and the remaining records are retried from the event loop's scheduler, backing off from {@link #MIN_RETRY_MICROS}
 * to {@link #MAX_RETRY_MICROS}. Acknowledgements arrive on the partition's journal thread; the last one hops to
 * the event loop to write the response.
 */
final class ProduceOperation implements SendCallback, Runnable {
    private static final long MIN_RETRY_MICROS = 20;
    private static final long MAX_RETRY_MICROS = 1_000;

    private final RequestHandler conn;
    private final long sequence;
    private final int correlationId;
    private final List<ProducerRecord> records;
    private final Producer producer;
    private final long[] offsets;
    private final AtomicInteger acknowledged = new AtomicInteger();
    private final AtomicInteger completed = new AtomicInteger();
    private final AtomicReference<Throwable> firstError = new AtomicReference<>();
    /** Event loop only: index of the next record to hand over. */
    private int next;
    private long retryMicros = MIN_RETRY_MICROS;

    ProduceOperation(RequestHandler conn, long sequence, int correlationId, Produce.Request request) {
        this.conn = conn;
        this.sequence = sequence;
        this.correlationId = correlationId;
        this.records = request.records();
        this.producer = conn.server.producer(request.acks());
        this.offsets = new long[records.size()];
    }

    void start() {
        int maxEventSize = conn.server.broker.config().maxEventSize();
        for (ProducerRecord r : records) {
            int size = r.serializedSize();
            if (size > maxEventSize) {
                throw new SluiceException.RecordTooLargeException(
                        "record of " + size + " bytes exceeds maxEventSize=" + maxEventSize + "; nothing of the batch was written");
            }
        }
        if (records.isEmpty()) {
            finish();
            return;
        }
        if (!sendMore()) {
            conn.server.counters.backPressurePauses.increment();
            conn.setBarrier(this);
            schedule();
        }
    }

    /** Retry after back-pressure (event loop). */
    @Override
    public void run() {
        if (sendMore()) {
            conn.clearBarrier(this);
        } else if (!conn.ctx().channel().isActive()) {
            fail(new SluiceException.ClosedException("connection closed"), records.size() - next);
            next = records.size();
        } else {
            retryMicros = Math.min(retryMicros * 2, MAX_RETRY_MICROS);
            schedule();
        }
    }

    private void schedule() {
        conn.ctx().executor().schedule(this, retryMicros, TimeUnit.MICROSECONDS);
    }

    /** @return true once every record was handed over (or failed up front) */
    private boolean sendMore() {
        while (next < records.size()) {
            long result;
            try {
                result = producer.trySend(records.get(next), this);
            } catch (RuntimeException e) {
                fail(e, records.size() - next);
                next = records.size();
                return true;
            }
            if (result == Producer.BACK_PRESSURED) {
                return false;
            }
            if (result == Producer.CLOSED) {
                fail(new SluiceException.ClosedException("broker is closing"), records.size() - next);
                next = records.size();
                return true;
            }
            next++;
        }
        return true;
    }

    /** Journal thread (or the event loop for acks MEMORY). */
    @Override
    public void onCompletion(int partition, long offset, Throwable error) {
        int index = acknowledged.getAndIncrement();
        offsets[index] = offset;
        if (error != null) {
            firstError.compareAndSet(null, error);
        }
        if (completed.incrementAndGet() == records.size()) {
            conn.ctx().executor().execute(this::finish);
        }
    }

    private void fail(Throwable error, int count) {
        firstError.compareAndSet(null, error);
        acknowledged.addAndGet(count);
        if (completed.addAndGet(count) == records.size()) {
            conn.ctx().executor().execute(this::finish);
        }
    }

    private void finish() {
        Throwable error = firstError.get();
        if (error != null) {
            conn.fail(sequence, correlationId, error);
        } else {
            conn.server.counters.producedRecords.add(records.size());
            conn.succeed(sequence, correlationId, new Produce.Response(offsets)::encode);
        }
    }
}
