package io.sluice.net.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.core.Producer;
import io.sluice.core.internal.BrokerFront;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;
import io.sluice.core.SluiceException.BackPressureException;
import io.sluice.core.SluiceException.ClosedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * One validated produce request in flight: sends its events in order with {@link Producer#trySend} (never blocking
 * the event loop), waits for every acknowledgement and answers once.
 *
 * <p>Threads: {@link #start} and the send loop run on the connection's event loop; acknowledgements arrive on the
 * partitions' journal threads, or for acks=journal on the event loop itself when it journaled the sends
 * ({@link BrokerFront#sendJournalingHere}: no thread hand-off when the partitions' journal writers are idle). {@code outstanding} counts sends not yet acknowledged plus one token held by the send
 * loop until it stops sending; whichever thread brings it to zero hands the answer back to the event loop. Each
 * acknowledgement writes only its own slot of {@code partitions}/{@code offsets} before decrementing, so the final
 * decrement publishes all of them.
 *
 * <p>Full ring: the send loop retries with a short capped backoff (scheduled on the event loop, nothing blocks) for
 * up to {@code maxBlockMillis}, then stops with {@code 503} and {@code Retry-After}. If that happens before the first
 * event was taken, nothing of the request was written; otherwise the answer lists exactly the events that were.
 */
final class ProduceRequest {
    private static final Logger LOG = LoggerFactory.getLogger(ProduceRequest.class);
    private static final long MAX_BACKOFF_MILLIS = 20;

    private final HttpApi api;
    private final ChannelHandlerContext ctx;
    private final Producer producer;
    /**
     * acks=journal, at most {@link BrokerFront#MAX_SENDS_JOURNALED_HERE} events: the sends are journaled on the event
     * loop when their partitions' writers are idle. A larger request leaves them to the journal threads, which drain
     * the ring while the loop fills it.
     */
    private final boolean journalHere;
    private final ProducerRecord[] records;
    private final int[] lines;
    private final int[] partitions;
    private final long[] offsets;
    private final boolean[] failedSlots;
    private final Consumer<FullHttpResponse> respond;
    private final long maxBlockNanos;

    private final AtomicInteger outstanding = new AtomicInteger(1);
    private final AtomicInteger failed = new AtomicInteger();
    private final AtomicReference<Throwable> firstFailure = new AtomicReference<>();
    private final AtomicBoolean answered = new AtomicBoolean();

    // event-loop state
    private int sent;
    private SluiceException stoppedBy;
    private long blockedSinceNanos;
    private long backoffMillis;
    private ScheduledFuture<?> ackTimer;

    ProduceRequest(HttpApi api, ChannelHandlerContext ctx, Producer producer, boolean journalHere, ProducerRecord[] records,
                   int[] lines, Consumer<FullHttpResponse> respond) {
        this.api = api;
        this.ctx = ctx;
        this.producer = producer;
        this.journalHere = journalHere && api.front != null && records.length > 0
                && records.length <= BrokerFront.MAX_SENDS_JOURNALED_HERE;
        this.records = records;
        this.lines = lines;
        this.partitions = new int[records.length];
        this.offsets = new long[records.length];
        this.failedSlots = new boolean[records.length];
        this.respond = respond;
        this.maxBlockNanos = TimeUnit.MILLISECONDS.toNanos(api.config.maxBlockMillis());
    }

    void start() {
        api.requestStarted();
        ackTimer = ctx.executor().schedule(this::ackTimedOut, api.config.ackTimeoutMillis(), TimeUnit.MILLISECONDS);
        sendMore();
    }

    private void sendMore() {
        if (answered.get()) {
            return; // timed out while backing off: send nothing more
        }
        if (journalHere) {
            api.front.sendJournalingHere(records[0].topic(), this::sendLoop); // BrokerFront#sendJournalingHere
        } else {
            sendLoop();
        }
    }

    private void sendLoop() {
        while (sent < records.length) {
            int i = sent;
            outstanding.incrementAndGet();
            long result;
            try {
                result = producer.trySend(records[i], (partition, offset, error) -> acknowledged(i, partition, offset, error));
            } catch (SluiceException e) {
                outstanding.decrementAndGet();
                stop(e);
                return;
            }
            if (result == Producer.ACCEPTED) {
                sent++;
                blockedSinceNanos = 0;
                continue;
            }
            outstanding.decrementAndGet();
            if (result == Producer.CLOSED || api.closing()) {
                stop(new ClosedException("the broker is shutting down"));
                return;
            }
            long now = System.nanoTime();
            if (blockedSinceNanos == 0) {
                blockedSinceNanos = now;
                backoffMillis = 1;
            }
            long waited = now - blockedSinceNanos;
            if (waited >= maxBlockNanos) {
                stop(new BackPressureException("a partition of topic '" + records[i].topic() + "' is full: no room within "
                        + api.config.maxBlockMillis() + " ms (http.max.block.ms); retry later"));
                return;
            }
            long delay = Math.min(backoffMillis, TimeUnit.NANOSECONDS.toMillis(maxBlockNanos - waited) + 1);
            backoffMillis = Math.min(backoffMillis * 2, MAX_BACKOFF_MILLIS);
            ctx.executor().schedule(this::sendMore, delay, TimeUnit.MILLISECONDS);
            return;
        }
        releaseSendToken();
    }

    private void stop(SluiceException reason) {
        stoppedBy = reason;
        releaseSendToken();
    }

    private void releaseSendToken() {
        if (outstanding.decrementAndGet() == 0) {
            answerOnEventLoop();
        }
    }

    /** Hands the answer to the connection's event loop; never throws into a journal thread. */
    private void answerOnEventLoop() {
        try {
            ctx.executor().execute(this::answer);
        } catch (RejectedExecutionException e) {
            // the listener is shut down: the connection is gone, there is nobody left to answer
            LOG.debug("produce request finished after the HTTP listener stopped; answer dropped with its connection");
            if (answered.compareAndSet(false, true)) {
                api.requestAnswered();
            }
        }
    }

    /** On a journal thread (or the event loop for an up-front rejection). */
    private void acknowledged(int i, int partition, long offset, Throwable error) {
        partitions[i] = partition;
        offsets[i] = offset;
        if (error != null) {
            failedSlots[i] = true;
            failed.incrementAndGet();
            firstFailure.compareAndSet(null, error);
        }
        if (outstanding.decrementAndGet() == 0) {
            answerOnEventLoop();
        }
    }

    private void answer() {
        if (!answered.compareAndSet(false, true)) {
            return;
        }
        api.requestAnswered();
        ackTimer.cancel(false);
        Throwable failure = stoppedBy != null ? stoppedBy : firstFailure.get();
        int acknowledged = sent - failed.get();
        api.metrics.eventsAccepted.add(acknowledged);
        if (failure == null) {
            respond.accept(accepted());
            return;
        }
        SluiceException.Code code = failure instanceof SluiceException se ? se.code() : SluiceException.Code.UNKNOWN;
        HttpResponseStatus status = JsonResponses.statusOf(code);
        if (code == SluiceException.Code.BACK_PRESSURED) {
            api.metrics.backPressured.increment();
        }
        String message = (acknowledged == 0 ? "nothing was written: " : acknowledged + " of " + records.length
                + " events were written (listed in offsets, by line), the rest were not: ") + failure.getMessage();
        FullHttpResponse response = JsonResponses.json(ctx.alloc(), status, json -> {
            json.writeStartObject();
            json.writeStringField("code", code.name());
            json.writeStringField("message", message);
            json.writeNumberField("count", acknowledged);
            json.writeArrayFieldStart("offsets");
            for (int i = 0; i < sent; i++) {
                if (!failedSlots[i]) {
                    json.writeStartObject();
                    json.writeNumberField("line", lines[i]);
                    json.writeNumberField("partition", partitions[i]);
                    json.writeNumberField("offset", offsets[i]);
                    json.writeEndObject();
                }
            }
            json.writeEndArray();
            json.writeEndObject();
        });
        if (status == HttpResponseStatus.SERVICE_UNAVAILABLE) {
            response.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
        }
        respond.accept(response);
    }

    /**
     * {@code 200 {"count":2,"offsets":[{"partition":1,"offset":41},{"partition":0,"offset":17}]}} and a newline: the
     * bytes Jackson's generator writes for it, written straight into the buffer, because this is the answer to almost
     * every request and a generator per answer costs more than the rest of building it.
     */
    private FullHttpResponse accepted() {
        ByteBuf body = ctx.alloc().buffer(COUNT.length + OFFSETS.length + 3 + records.length * (PARTITION.length + OFFSET.length + 24));
        body.writeBytes(COUNT);
        writeDecimal(body, records.length);
        body.writeBytes(OFFSETS);
        for (int i = 0; i < records.length; i++) {
            if (i > 0) {
                body.writeByte(',');
            }
            body.writeBytes(PARTITION);
            writeDecimal(body, partitions[i]);
            body.writeBytes(OFFSET);
            writeDecimal(body, offsets[i]);
            body.writeByte('}');
        }
        body.writeByte(']').writeByte('}').writeByte('\n');
        return JsonResponses.constantHeaders(HttpResponseStatus.OK, body);
    }

    private static final byte[] COUNT = ascii("{\"count\":");
    private static final byte[] OFFSETS = ascii(",\"offsets\":[");
    private static final byte[] PARTITION = ascii("{\"partition\":");
    private static final byte[] OFFSET = ascii(",\"offset\":");

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** {@code value} in decimal ASCII, as {@link Long#toString(long)} writes it but without the String. */
    static void writeDecimal(ByteBuf out, long value) {
        if (value < 0) {
            if (value == Long.MIN_VALUE) {
                out.writeCharSequence(Long.toString(value), StandardCharsets.US_ASCII);
                return;
            }
            out.writeByte('-');
            value = -value;
        }
        long divisor = 1;
        while (divisor <= value / 10) {
            divisor *= 10;
        }
        for (; divisor > 0; divisor /= 10) {
            out.writeByte((int) ('0' + value / divisor % 10));
        }
    }

    private void ackTimedOut() {
        if (!answered.compareAndSet(false, true)) {
            return;
        }
        api.requestAnswered();
        int pending = outstanding.get();
        respond.accept(JsonResponses.error(ctx.alloc(), HttpResponseStatus.GATEWAY_TIMEOUT, SluiceException.Code.TIMEOUT,
                "acknowledgements not complete within " + api.config.ackTimeoutMillis() + " ms (http.ack.timeout.ms): "
                        + sent + " of " + records.length + " events were sent and about " + pending
                        + " not yet acknowledged; they may still be written"));
    }
}
