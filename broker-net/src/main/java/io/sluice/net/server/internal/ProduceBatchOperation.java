package io.sluice.net.server.internal;

import io.netty.buffer.ByteBuf;
import io.sluice.core.Producer;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.BrokerFront;
import io.sluice.net.protocol.Produce;

import io.sluice.records.CheckedBatch;
import java.util.concurrent.TimeUnit;

/**
 * One PRODUCE request: its record batch, already checked by {@link Produce.BatchRequest#decode} (a
 * {@link CheckedBatch}), goes to the partition as one unit ({@link BrokerFront#tryAppendBatch}: one ring slot, one
 * journal document, bytes unchanged but the base offset), and the answer is the base offset once the batch reached
 * the requested durability.
 *
 * <p>Normally the batch is copied straight from the request frame into the partition's ring. When the ring (or its
 * batch memory) is full, the batch is copied once to the heap ({@link CheckedBatch#copy}: still checked), the
 * operation becomes the connection's barrier (the connection stops reading) and the append is retried from the event
 * loop's scheduler, backing off from {@link #MIN_RETRY_MICROS} to {@link #MAX_RETRY_MICROS}.
 */
final class ProduceBatchOperation implements SendCallback, Runnable {
    private static final long MIN_RETRY_MICROS = 20;
    private static final long MAX_RETRY_MICROS = 1_000;

    private final RequestHandler conn;
    private final long sequence;
    private final int correlationId;
    private final Produce.BatchRequest request;
    private final TopicPartition partition;
    /** Set only while waiting out back-pressure: the frame is released when start() returns. */
    private CheckedBatch retained;
    private long retryMicros = MIN_RETRY_MICROS;

    ProduceBatchOperation(RequestHandler conn, long sequence, int correlationId, Produce.BatchRequest request) {
        this.conn = conn;
        this.sequence = sequence;
        this.correlationId = correlationId;
        this.request = request;
        this.partition = new TopicPartition(request.topic(), request.partition());
    }

    /** Event loop, while {@code frame} (which the request's batch is a view of) is still held. */
    void start(ByteBuf frame) {
        if (!append(request.batch())) {
            retained = request.batch().copy();
            conn.server.counters.backPressurePauses.increment();
            conn.setBarrier(this);
            schedule();
        }
    }

    /** Retry after back-pressure (event loop). */
    @Override
    public void run() {
        if (append(retained)) {
            retained = null;
            conn.clearBarrier(this);
        } else if (!conn.ctx().channel().isActive()) {
            retained = null;
            conn.clearBarrier(this);
            onCompletion(request.partition(), -1, new SluiceException.ClosedException("connection closed"));
        } else {
            retryMicros = Math.min(retryMicros * 2, MAX_RETRY_MICROS);
            schedule();
        }
    }

    private void schedule() {
        conn.ctx().executor().schedule(this, retryMicros, TimeUnit.MICROSECONDS);
    }

    /** @return false if back-pressured (nothing taken); true once accepted or answered with an error */
    private boolean append(CheckedBatch batch) {
        long result;
        try {
            result = conn.server.front.tryAppendBatch(partition, batch, request.acks(), this);
        } catch (RuntimeException e) {
            onCompletion(request.partition(), -1, e);
            return true;
        }
        if (result == Producer.BACK_PRESSURED) {
            return false;
        }
        if (result == Producer.CLOSED) {
            onCompletion(request.partition(), -1, new SluiceException.ClosedException("broker is closing"));
        }
        return true;
    }

    /**
     * Journal thread, or the event loop itself: acks MEMORY, an error up front, or a batch the loop journaled
     * ({@link BrokerFront#tryAppendBatch}), which is answered here without a hop.
     */
    @Override
    public void onCompletion(int p, long baseOffset, Throwable error) {
        if (conn.ctx().executor().inEventLoop()) {
            finish(baseOffset, error);
        } else {
            conn.ctx().executor().execute(() -> finish(baseOffset, error));
        }
    }

    private void finish(long baseOffset, Throwable error) {
        if (error != null) {
            conn.fail(sequence, correlationId, error);
        } else {
            conn.server.counters.producedRecords.add(request.batch().recordCount());
            conn.succeed(sequence, correlationId, new Produce.BatchResponse(baseOffset)::encode);
        }
    }
}
