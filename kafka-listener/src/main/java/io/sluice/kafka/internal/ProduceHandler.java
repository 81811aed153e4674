package io.sluice.kafka.internal;

import io.sluice.core.Acks;
import io.sluice.core.Producer;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidRequiredAcksException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse;
import org.apache.kafka.common.message.ProduceResponseData.TopicProduceResponse;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Produce: each partition's records are checked and brought to the stored form ({@link ProducedBatch}), an
 * idempotent producer's sequence is checked ({@link ProducerStates}), and each batch is appended as one unit with
 * {@code BrokerFront.tryAppendBatch} (one ring slot, one journal document, bytes unchanged but the base offset). The
 * answer goes once every partition reached the requested durability: acks 0 → {@link Acks#MEMORY} and no answer,
 * acks 1 → {@link Acks#JOURNAL} (survives a process crash), acks -1/all → {@link Acks#SYNC} (synced to disk), the
 * same reading of Kafka's acks as {@link Acks#parse}. An acks=0 produce that fails closes the connection after
 * the responses before it, as Kafka does, since no answer can carry the error.
 *
 * <p>Back-pressure, as the binary port's ProduceBatchOperation: when a partition's ring (or batch memory) is full,
 * the batches not yet appended are copied off the request frame, the request becomes the connection's barrier (the
 * connection stops reading) and the append is retried from the event loop's scheduler, backing off from
 * {@link #MIN_RETRY_MICROS} to {@link #MAX_RETRY_MICROS}.
 */
final class ProduceHandler implements ApiHandler {
    static final long MIN_RETRY_MICROS = 20;
    static final long MAX_RETRY_MICROS = 1_000;

    private final ListenerContext context;
    private final ProducerStates producers;

    ProduceHandler(ListenerContext context, ProducerStates producers) {
        this.context = context;
        this.producers = producers;
    }

    @Override
    public void handle(KafkaRequest request) {
        ProduceRequestData data = request.data();
        Acks acks = switch (data.acks()) {
            case 0 -> Acks.MEMORY;
            case 1 -> Acks.JOURNAL;
            case -1 -> Acks.SYNC;
            default -> null;
        };
        ProduceResponseData response = new ProduceResponseData();
        List<Append> appends = new ArrayList<>();
        int maxEventSize = context.broker().config().maxEventSize();
        for (ProduceRequestData.TopicProduceData topic : data.topicData()) {
            TopicProduceResponse topicResponse = new TopicProduceResponse().setName(topic.name());
            response.responses().add(topicResponse);
            for (ProduceRequestData.PartitionProduceData partition : topic.partitionData()) {
                PartitionProduceResponse out = new PartitionProduceResponse().setIndex(partition.index())
                        .setBaseOffset(-1).setLogAppendTimeMs(RecordBatch.NO_TIMESTAMP).setLogStartOffset(-1);
                topicResponse.partitionResponses().add(out);
                try {
                    if (acks == null) {
                        throw new InvalidRequiredAcksException("acks must be 0, 1 or -1, got " + data.acks());
                    }
                    if (data.transactionalId() != null) {
                        throw new TransactionalIdAuthorizationException("transactions are not supported by Sluice");
                    }
                    TopicPartition tp = partition(topic.name(), partition.index());
                    for (ProducedBatch batch : ProducedBatch.check((MemoryRecords) partition.records(), maxEventSize)) {
                        appends.add(new Append(tp, batch, out));
                    }
                } catch (ApiException e) {
                    setError(out, e);
                }
            }
        }
        new Operation(request, response, acks == null ? Acks.JOURNAL : acks, appends, data.acks() == 0).start();
    }

    private TopicPartition partition(String topic, int partition) {
        int count;
        try {
            count = context.broker().partitionCount(topic);
        } catch (SluiceException.UnknownTopicException e) {
            throw new UnknownTopicOrPartitionException("topic '" + topic + "' does not exist");
        }
        if (partition < 0 || partition >= count) {
            throw new UnknownTopicOrPartitionException("topic '" + topic + "' has " + count + " partitions, not " + partition);
        }
        return new TopicPartition(topic, partition);
    }

    private static void setError(PartitionProduceResponse out, Throwable error) {
        Errors e = KafkaRequest.errorOf(error);
        synchronized (out) {
            out.setErrorCode(e.code()).setErrorMessage(error.getMessage()).setBaseOffset(-1);
        }
    }

    /** One batch for one partition; the first batch of a partition sets its base offset. */
    private static final class Append {
        final TopicPartition tp;
        ProducedBatch batch;
        final PartitionProduceResponse out;
        Object ticket;

        Append(TopicPartition tp, ProducedBatch batch, PartitionProduceResponse out) {
            this.tp = tp;
            this.batch = batch;
            this.out = out;
        }
    }

    /** One Produce request's appends, in order, across back-pressure retries; answers when all completed. */
    private final class Operation implements Runnable {
        private final KafkaRequest request;
        private final ProduceResponseData response;
        private final Acks acks;
        private final List<Append> appends;
        private final boolean silent;
        /** appends not yet completed, plus one for the starting pass */
        private final AtomicInteger pending;
        private int next;
        private long retryMicros = MIN_RETRY_MICROS;
        private boolean barrier;

        Operation(KafkaRequest request, ProduceResponseData response, Acks acks, List<Append> appends, boolean silent) {
            this.request = request;
            this.response = response;
            this.acks = acks;
            this.appends = appends;
            this.silent = silent;
            this.pending = new AtomicInteger(appends.size() + 1);
        }

        /** Event loop, while the request frame is held. */
        void start() {
            if (!appendAll()) {
                for (int i = next; i < appends.size(); i++) {
                    appends.get(i).batch = appends.get(i).batch.detached();
                }
                context.counters().backPressurePauses.increment();
                barrier = true;
                request.connection().setBarrier(this);
                schedule();
            }
        }

        /** Retry after back-pressure (event loop). */
        @Override
        public void run() {
            if (!request.connection().isActive()) {
                for (int i = next; i < appends.size(); i++) {
                    // through the completion: a batch whose sequence was already checked is forgotten again, so the
                    // producer's retry on another connection is appended rather than waiting on this one
                    Append append = appends.get(i);
                    new Completion(append).onCompletion(append.tp.partition(), -1, new SluiceException.ClosedException("connection closed"));
                }
                next = appends.size();
                release();
                return;
            }
            if (appendAll()) {
                release();
            } else {
                retryMicros = Math.min(retryMicros * 2, MAX_RETRY_MICROS);
                schedule();
            }
        }

        private void release() {
            if (barrier) {
                barrier = false;
                request.connection().clearBarrier(this);
            }
        }

        private void schedule() {
            request.eventLoop().schedule(this, retryMicros, TimeUnit.MICROSECONDS);
        }

        /** @return false when back-pressured (the rest waits for a retry); true once every append was handed over */
        private boolean appendAll() {
            while (next < appends.size()) {
                Append append = appends.get(next);
                if (!appendOne(append)) {
                    return false;
                }
                next++;
            }
            done(); // the starting pass's share
            return true;
        }

        private boolean appendOne(Append append) {
            ProducedBatch batch = append.batch;
            if (batch.producerId() >= 0 && append.ticket == null) {
                Object checked;
                try {
                    checked = producers.check(append.tp, batch);
                } catch (ApiException e) {
                    complete(append, -1, e);
                    return true;
                }
                if (checked instanceof ProducerStates.Duplicate duplicate) {
                    duplicate.baseOffset().whenComplete((base, error) -> complete(append, base == null ? -1 : base, error));
                    return true;
                }
                append.ticket = checked;
            }
            long result;
            try {
                result = context.front().tryAppendBatch(append.tp, batch.checked(), acks, new Completion(append));
            } catch (RuntimeException e) {
                new Completion(append).onCompletion(append.tp.partition(), -1, e);
                return true;
            }
            if (result == Producer.BACK_PRESSURED) {
                return false;
            }
            if (result == Producer.CLOSED) {
                new Completion(append).onCompletion(append.tp.partition(), -1, new SluiceException.ClosedException("broker is closing"));
            }
            return true;
        }

        private final class Completion implements SendCallback {
            private final Append append;

            Completion(Append append) {
                this.append = append;
            }

            /** Journal thread, or the event loop (MEMORY, errors up front, or a batch it journaled itself). */
            @Override
            public void onCompletion(int partition, long baseOffset, Throwable error) {
                if (append.ticket != null) {
                    if (error == null) {
                        producers.appended(append.ticket, baseOffset);
                    } else {
                        producers.failed(append.tp, append.batch.producerId(), append.ticket, error);
                    }
                }
                complete(append, baseOffset, error);
            }
        }

        private void complete(Append append, long baseOffset, Throwable error) {
            if (error != null) {
                setError(append.out, error);
            } else {
                synchronized (append.out) {
                    if (append.out.errorCode() == 0 && append.out.baseOffset() < 0) {
                        append.out.setBaseOffset(baseOffset);
                    }
                }
                context.counters().producedRecords.add(append.batch.recordCount());
            }
            done();
        }

        private void done() {
            if (pending.decrementAndGet() != 0) {
                return;
            }
            if (silent) {
                boolean failed = response.responses().stream().flatMap(t -> t.partitionResponses().stream())
                        .anyMatch(partition -> partition.errorCode() != Errors.NONE.code());
                if (failed) {
                    request.respondNothingAndClose(); // acks=0 has no answer: a closed connection tells the client
                } else {
                    request.respondNothing();
                }
            } else {
                request.respond(response);
            }
        }
    }
}
