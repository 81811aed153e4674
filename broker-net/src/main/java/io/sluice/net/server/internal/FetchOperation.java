package io.sluice.net.server.internal;

import io.netty.buffer.ByteBuf;
import io.sluice.core.Broker;
import io.sluice.core.PartitionReader;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.BrokerFront;
import io.sluice.net.protocol.Fetch;
import io.sluice.net.server.pipeline.ChunkedBatchSink;
import io.sluice.net.server.pipeline.SplitFrame;

import java.util.concurrent.TimeUnit;

/**
 * One FETCH request, on the connection's event loop. Answers at once when any requested partition has records
 * (or an error); otherwise it waits to be woken, not on a polling timer: {@link BrokerFront#onNextAppend} runs it again
 * on the event loop after the next journal batch of a requested partition, and one timer answers it (empty) when
 * {@code maxWaitMillis} passed.
 * It copies the journal's stored record batches, whole and unchanged, from the connection's partition reader into
 * the response: into its fields buffer while that stays small, then into pooled chunks spliced in between its fields
 * ({@link PartitionReader#readBatches} into a {@link ChunkedBatchSink}: one copy per batch, no per-record work, no
 * buffer above Netty's pooled sizes). It does so only when this response can be written at once
 * ({@link RequestHandler#canWriteNow}): a fetch that is ready behind earlier responses, or behind a socket its client
 * does not read, waits for its turn without holding any records.
 *
 * <p>Response size: at most {@code maxBytes} of batches, plus one whole batch per partition when its first batch
 * alone is larger than what is left (a batch is bounded by the journal's batch size, or holds one record of at most
 * {@code maxEventSize}).
 */
final class FetchOperation implements Runnable {

    private final RequestHandler conn;
    private final long sequence;
    private final int correlationId;
    private final Fetch.Request request;
    private final long deadlineNanos;
    /** answering (data, error, deadline or draining): later wake-ups and the deadline timer are ignored */
    private boolean answering;
    private boolean deadlineScheduled;
    /** cancels the pending append wake-up, or null */
    private Runnable cancelWake;

    FetchOperation(RequestHandler conn, long sequence, int correlationId, Fetch.Request request) {
        this.conn = conn;
        this.sequence = sequence;
        this.correlationId = correlationId;
        this.request = request;
        this.deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(request.maxWaitMillis());
    }

    /** Event loop only: the first call, each append wake-up and the deadline timer. */
    @Override
    public void run() {
        if (answering) {
            return;
        }
        if (!conn.ctx().channel().isActive()) {
            stopWaiting();
            return;
        }
        if (conn.isDraining() || System.nanoTime() - deadlineNanos >= 0 || hasDataOrError()) {
            stopWaiting();
            answering = true;
            answerInTurn();
            return;
        }
        if (!deadlineScheduled) {
            deadlineScheduled = true;
            conn.ctx().executor().schedule(this, Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        // register, then re-check: an append before the registration is seen now, a later one wakes us
        conn.waitingFetches().add(this);
        if (cancelWake != null) {
            cancelWake.run();
        }
        cancelWake = conn.server.front.onNextAppend(partitions(), () -> conn.ctx().executor().execute(this));
        if (hasDataOrError()) {
            conn.ctx().executor().execute(this);
        }
    }

    private void stopWaiting() {
        conn.waitingFetches().remove(this);
        if (cancelWake != null) {
            cancelWake.run();
            cancelWake = null;
        }
    }

    private void answerInTurn() {
        if (conn.isDraining() || conn.canWriteNow(sequence)) {
            respond();
        } else {
            // behind earlier responses or a socket the client does not read: build nothing until our turn
            conn.awaitTurn(sequence, this::answerInTurn);
        }
    }

    private java.util.List<io.sluice.core.TopicPartition> partitions() {
        java.util.List<io.sluice.core.TopicPartition> out = new java.util.ArrayList<>(request.partitions().size());
        for (Fetch.PartitionRequest p : request.partitions()) {
            out.add(p.partition());
        }
        return out;
    }

    private boolean hasDataOrError() {
        Broker broker = conn.server.broker;
        for (Fetch.PartitionRequest p : request.partitions()) {
            try {
                if (broker.endOffset(p.partition()) != p.offset()) {
                    return true;
                }
            } catch (RuntimeException e) {
                return true;
            }
        }
        return false;
    }

    private void respond() {
        // batches up to ChunkedBatchSink.INLINE_BYTES go into the fields buffer, the rest in pooled chunks (SplitFrame)
        conn.succeedSplit(sequence, correlationId, this::write,
                256 + 128 * request.partitions().size() + Math.min(request.maxBytes(), ChunkedBatchSink.INLINE_BYTES));
    }

    private void write(ByteBuf out, SplitFrame parts) {
        Broker broker = conn.server.broker;
        int remaining = request.maxBytes();
        out.writeInt(request.partitions().size());
        for (Fetch.PartitionRequest p : request.partitions()) {
            TopicPartition tp = p.partition();
            long start;
            long end;
            try {
                start = broker.startOffset(tp);
                end = broker.endOffset(tp);
            } catch (SluiceException e) {
                Fetch.Response.writePartitionHeader(out, tp, e.code(), e.getMessage(), -1, -1);
                continue;
            }
            if (p.offset() < start || p.offset() > end) {
                Fetch.Response.writePartitionHeader(out, tp, SluiceException.Code.OFFSET_OUT_OF_RANGE,
                        "offset " + p.offset() + " is outside [" + start + ", " + end + "]", start, end);
                continue;
            }
            int headerStart = out.writerIndex();
            int countIndex = Fetch.Response.writePartitionHeader(out, tp, SluiceException.Code.NONE, null, start, end);
            if (p.offset() == end || remaining <= 0) {
                continue;
            }
            int budget = Math.min(remaining, p.maxBytes());
            int mark = parts.mark();
            // a chunk goes where the fields end: no batch is written into them once a chunk is open
            ChunkedBatchSink batches = new ChunkedBatchSink(parts.alloc(), out,
                    chunk -> parts.splice(out.writerIndex(), chunk), budget);
            int count;
            try {
                PartitionReader reader = conn.reader(tp);
                if (reader.position() != p.offset()) {
                    reader.seek(p.offset());
                }
                reader.readBatches(budget, batches);
                count = (int) (reader.position() - p.offset());
            } catch (SluiceException e) {
                // a read failure (for example the partition was truncated by retention): report it instead
                batches.finish();
                parts.reset(mark); // the batches spliced at or after headerStart
                out.writerIndex(headerStart);
                Fetch.Response.writePartitionHeader(out, tp, e.code(), e.getMessage(), start, end);
                continue;
            } catch (RuntimeException | Error e) {
                batches.finish(); // into parts, which the caller frees
                throw e;
            }
            int bytes = batches.finish();
            Fetch.Response.patchCount(out, countIndex, bytes);
            conn.server.counters.fetchedRecords.add(count);
            remaining -= bytes;
        }
    }
}
