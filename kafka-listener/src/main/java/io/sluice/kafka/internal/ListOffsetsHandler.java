package io.sluice.kafka.internal;

import io.sluice.core.PartitionReader;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsPartitionResponse;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsTopicResponse;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ListOffsetsRequest;

/**
 * ListOffsets: earliest (-2, and -4 earliest-local: the same here) is the partition's start offset, latest (-1) its
 * end offset, a timestamp the first offset whose record timestamp is at or after it ({@code offsetForTimestamp},
 * with that record's timestamp; -1/-1 when none is), max-timestamp (-3) the last record (Sluice keeps no
 * max-timestamp index; the last record has the largest CreateTime for the usual producer). Runs on the admin
 * thread: a timestamp lookup reads the journal.
 */
final class ListOffsetsHandler implements ApiHandler {
    private final ListenerContext context;

    ListOffsetsHandler(ListenerContext context) {
        this.context = context;
    }

    @Override
    public void handle(KafkaRequest request) {
        context.admin().execute(() -> {
            try {
                request.respond(answer(request.data(), request.version()));
            } catch (RuntimeException e) {
                request.fail(e);
            }
        });
    }

    private ListOffsetsResponseData answer(ListOffsetsRequestData data, short version) {
        ListOffsetsResponseData response = new ListOffsetsResponseData();
        for (ListOffsetsRequestData.ListOffsetsTopic topic : data.topics()) {
            ListOffsetsTopicResponse topicResponse = new ListOffsetsTopicResponse().setName(topic.name());
            response.topics().add(topicResponse);
            for (ListOffsetsRequestData.ListOffsetsPartition partition : topic.partitions()) {
                ListOffsetsPartitionResponse out = new ListOffsetsPartitionResponse()
                        .setPartitionIndex(partition.partitionIndex()).setTimestamp(-1).setOffset(-1);
                if (version >= 4) { // the generated writer refuses a field its version does not have
                    out.setLeaderEpoch(MetadataHandler.LEADER_EPOCH);
                }
                topicResponse.partitions().add(out);
                try {
                    lookup(new TopicPartition(topic.name(), partition.partitionIndex()), partition.timestamp(), out);
                } catch (SluiceException.UnknownTopicException e) {
                    out.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
                } catch (SluiceException e) {
                    out.setErrorCode(KafkaRequest.errorOf(e).code());
                }
            }
        }
        return response;
    }

    private void lookup(TopicPartition tp, long timestamp, ListOffsetsPartitionResponse out) {
        int count = context.broker().partitionCount(tp.topic());
        if (tp.partition() < 0 || tp.partition() >= count) {
            out.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
            return;
        }
        long start = context.broker().startOffset(tp);
        long end = context.broker().endOffset(tp);
        if (timestamp == ListOffsetsRequest.EARLIEST_TIMESTAMP || timestamp == ListOffsetsRequest.EARLIEST_LOCAL_TIMESTAMP) {
            out.setOffset(start);
        } else if (timestamp == ListOffsetsRequest.LATEST_TIMESTAMP) {
            out.setOffset(end);
        } else if (timestamp == ListOffsetsRequest.LATEST_TIERED_TIMESTAMP) {
            return; // no tiered storage: -1, as Kafka answers without it
        } else if (timestamp == ListOffsetsRequest.MAX_TIMESTAMP) {
            if (end > start) {
                out.setOffset(end - 1).setTimestamp(timestampAt(tp, end - 1));
            }
        } else if (timestamp >= 0) {
            long offset = context.broker().offsetForTimestamp(tp, timestamp);
            if (offset < end) {
                out.setOffset(offset).setTimestamp(timestampAt(tp, offset));
            }
        } else {
            out.setErrorCode(Errors.INVALID_REQUEST.code());
        }
    }

    private long timestampAt(TopicPartition tp, long offset) {
        try (PartitionReader reader = context.front().openReader(tp)) {
            reader.seek(offset);
            long[] ts = {-1};
            reader.readViews(1, 1, r -> ts[0] = r.timestamp()); // no copy of the record kept: only its timestamp is needed
            return ts[0];
        }
    }
}
