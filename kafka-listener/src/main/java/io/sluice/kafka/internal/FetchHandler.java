package io.sluice.kafka.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.sluice.core.PartitionReader;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.net.server.pipeline.ChunkedBatchSink;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.FetchResponseData.FetchableTopicResponse;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Fetch, sessionless (every request names its partitions; the answer's session id is 0, which tells the client no
 * session was made). Each partition's stored batches are sent as they are in the journal — Kafka's RecordBatch v2
 * with the base offset set — read with the connection's {@link PartitionReader}; the first batch may start before
 * the fetch offset, and the client skips those records as it does with Kafka. High watermark = last stable offset =
 * the partition's end offset (no transactions); log start offset = its first retained offset.
 *
 * <p>Bounded: a response carries at most {@code max.fetch.bytes} (and the client's max_bytes and per-partition
 * max_bytes), beyond which only the first whole batch of a partition is sent, as Kafka does. Long-poll: with fewer
 * than min_bytes ready, the request waits (up to max_wait_ms, capped by {@code max.fetch.wait.ms}) for the next
 * append to one of its partitions ({@code BrokerFront.onNextAppend}), then answers with what is there. Event loop only.
 */
final class FetchHandler implements ApiHandler {
    private final ListenerContext context;

    FetchHandler(ListenerContext context) {
        this.context = context;
    }

    @Override
    public void handle(KafkaRequest request) {
        new Poll(request).run();
    }

    /** One fetch, answered now or after the next append / the wait's end. */
    private final class Poll implements Runnable {
        private final KafkaRequest request;
        private final FetchRequestData data;
        private final long deadlineNanos;
        private Runnable cancelWake;
        private ScheduledFuture<?> timer;
        private boolean answered;
        private final Runnable drain = this::answerNow;

        Poll(KafkaRequest request) {
            this.request = request;
            this.data = request.data();
            long wait = Math.max(0, Math.min(data.maxWaitMs(), context.server().maxFetchWaitMillis()));
            this.deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(wait);
        }

        /** Builds the response; answers when it has min_bytes, an error, the wait ran out, or the connection drains. */
        @Override
        public void run() {
            if (answered) {
                return;
            }
            cancelWaits();
            Built built = build();
            boolean expired = System.nanoTime() >= deadlineNanos;
            if (built.bytes >= Math.max(1, data.minBytes()) || built.errors || expired
                    || request.connection().isDraining() || !request.connection().isActive()) {
                answer(built);
                return;
            }
            built.release(); // fewer than min_bytes: built again when woken
            // register, then re-check: an append between build() and the registration is seen by the re-check
            cancelWake = context.front().onNextAppend(built.partitions, () -> request.eventLoop().execute(this));
            if (ended(built)) {
                request.eventLoop().execute(this);
            }
            request.connection().waitingFetches().add(drain);
            timer = request.eventLoop().schedule(this, Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        }

        private void answerNow() {
            if (!answered) {
                cancelWaits();
                answer(build());
            }
        }

        private boolean ended(Built built) {
            for (int i = 0; i < built.partitions.size(); i++) {
                try {
                    if (context.broker().endOffset(built.partitions.get(i)) > built.offsets.get(i)) {
                        return true;
                    }
                } catch (RuntimeException e) {
                    return true; // the topic went away: answer, and the answer says so
                }
            }
            return false;
        }

        private void cancelWaits() {
            if (cancelWake != null) {
                cancelWake.run();
                cancelWake = null;
            }
            if (timer != null) {
                timer.cancel(false);
                timer = null;
            }
            request.connection().waitingFetches().remove(drain);
        }

        private void answer(Built built) {
            answered = true;
            request.respond(built.response, built.records);
        }

        /** The response as it stands now; its record buffers belong to the caller ({@link Built#release}). */
        private Built build() {
            Built built = new Built();
            try {
                fillAll(built);
            } catch (RuntimeException e) {
                built.release();
                throw e;
            }
            return built;
        }

        private void fillAll(Built built) {
            FetchResponseData response = new FetchResponseData().setErrorCode(Errors.NONE.code()).setSessionId(0);
            built.response = response;
            int budget = Math.max(1, Math.min(data.maxBytes(), context.server().maxFetchBytes()));
            for (FetchRequestData.FetchTopic topic : data.topics()) {
                FetchableTopicResponse topicResponse = new FetchableTopicResponse().setTopic(topic.topic()).setTopicId(topic.topicId());
                response.responses().add(topicResponse);
                for (FetchRequestData.FetchPartition partition : topic.partitions()) {
                    PartitionData out = new PartitionData().setPartitionIndex(partition.partition())
                            .setHighWatermark(-1).setLastStableOffset(-1).setLogStartOffset(-1)
                            .setAbortedTransactions(null).setPreferredReadReplica(-1).setRecords(MemoryRecords.EMPTY);
                    topicResponse.partitions().add(out);
                    TopicPartition tp = new TopicPartition(topic.topic(), partition.partition());
                    int read = fill(tp, partition, out, Math.min(budget - built.bytes, partition.partitionMaxBytes()),
                            built.bytes == 0, built.records);
                    if (out.errorCode() != Errors.NONE.code()) {
                        built.errors = true;
                    } else {
                        built.partitions.add(tp);
                        built.offsets.add(partition.fetchOffset());
                    }
                    built.bytes += read;
                }
            }
        }

        /**
         * One partition's part: its offsets and up to {@code maxBytes} of whole batches (one at least when first),
         * copied once from the journal into pooled chunks ({@link ChunkedBatchSink}), whose composite is added to
         * {@code records}.
         */
        private int fill(TopicPartition tp, FetchRequestData.FetchPartition partition, PartitionData out, int maxBytes,
                         boolean first, List<ByteBuf> records) {
            long start;
            long end;
            try {
                int count = context.broker().partitionCount(tp.topic());
                if (tp.partition() < 0 || tp.partition() >= count) {
                    out.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
                    return 0;
                }
                start = context.broker().startOffset(tp);
                end = context.broker().endOffset(tp);
            } catch (SluiceException.UnknownTopicException e) {
                out.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
                return 0;
            }
            out.setHighWatermark(end).setLastStableOffset(end);
            if (request.version() >= 5) { // the generated writer refuses a field its version does not have
                out.setLogStartOffset(start);
            }
            long offset = partition.fetchOffset();
            if (offset < start || offset > end) {
                out.setErrorCode(Errors.OFFSET_OUT_OF_RANGE.code());
                return 0;
            }
            if (offset == end || (maxBytes <= 0 && !first)) {
                return 0;
            }
            CompositeByteBuf buffer = request.connection().alloc().compositeDirectBuffer(Integer.MAX_VALUE);
            ChunkedBatchSink sink = new ChunkedBatchSink(request.connection().alloc(), null,
                    chunk -> buffer.addComponent(true, chunk), Math.max(0, maxBytes));
            boolean kept = false;
            try {
                PartitionReader reader = request.connection().reader(tp);
                if (reader.position() != offset) {
                    reader.seek(offset);
                }
                reader.readBatches(Math.max(0, maxBytes), sink);
                int bytes = sink.finish();
                if (bytes > 0) {
                    out.setRecords(new SplicedRecords(buffer));
                    records.add(buffer);
                    kept = true;
                    context.counters().fetchedBatches.increment();
                }
                return bytes;
            } catch (SluiceException.OffsetOutOfRangeException e) {
                out.setErrorCode(Errors.OFFSET_OUT_OF_RANGE.code());
                request.connection().dropReader(tp);
                return 0;
            } catch (SluiceException e) {
                out.setErrorCode(KafkaRequest.errorOf(e).code());
                request.connection().dropReader(tp);
                return 0;
            } finally {
                sink.finish(); // a chunk left open by a failed read joins the buffer, which is then freed
                if (!kept) {
                    buffer.release();
                }
            }
        }
    }

    private static final class Built {
        FetchResponseData response;
        int bytes;
        boolean errors;
        final List<TopicPartition> partitions = new ArrayList<>();
        final List<Long> offsets = new ArrayList<>();
        /** each partition's copied batches (pooled; the response's record sets are views of them), in response order */
        final List<ByteBuf> records = new ArrayList<>();

        /** Frees the record buffers of a response that is not sent. */
        void release() {
            records.forEach(ByteBuf::release);
            records.clear();
        }
    }
}
