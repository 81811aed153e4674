package io.sluice.kafka.internal;

import io.sluice.core.ClassicGroups;
import io.sluice.core.TopicPartition;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;

/**
 * OffsetCommit: a member of the current generation (a commit may move an offset back: the consumer seeked), or a
 * consumer outside the membership (generation -1, no member id: {@code assign()}) while the group has no members.
 * Durable when answered (the offset file and its directory are fsync'ed). The commit's metadata string and
 * retention time are not kept (OffsetFetch answers an empty metadata).
 */
final class OffsetCommitHandler implements ApiHandler {
    private final ClassicGroups groups;
    private final Executor calls;

    OffsetCommitHandler(ClassicGroups groups, Executor calls) {
        this.groups = groups;
        this.calls = calls;
    }

    @Override
    public void handle(KafkaRequest request) {
        OffsetCommitRequestData data = request.data();
        Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
        List<TopicPartition> invalid = new ArrayList<>();
        for (OffsetCommitRequestData.OffsetCommitRequestTopic t : data.topics()) {
            for (OffsetCommitRequestData.OffsetCommitRequestPartition p : t.partitions()) {
                if (t.name() == null || t.name().isEmpty() || p.partitionIndex() < 0) {
                    continue; // not addressable: answered below as unknown
                }
                offsets.put(new TopicPartition(t.name(), p.partitionIndex()), p.committedOffset());
            }
        }
        GroupApis.offLoop(request, calls, () -> {
            ClassicGroups.CommitResult r = data.groupId() == null || data.groupId().isEmpty()
                    ? new ClassicGroups.CommitResult(ClassicGroups.Error.INVALID_GROUP_ID, Map.of())
                    : groups.commit(data.groupId(), data.generationIdOrMemberEpoch(), data.memberId(), offsets);
            OffsetCommitResponseData response = new OffsetCommitResponseData();
            for (OffsetCommitRequestData.OffsetCommitRequestTopic t : data.topics()) {
                OffsetCommitResponseData.OffsetCommitResponseTopic topic = new OffsetCommitResponseData.OffsetCommitResponseTopic()
                        .setName(t.name());
                for (OffsetCommitRequestData.OffsetCommitRequestPartition p : t.partitions()) {
                    ClassicGroups.Error e = r.error();
                    if (e == ClassicGroups.Error.NONE) {
                        e = t.name() == null || t.name().isEmpty() || p.partitionIndex() < 0
                                ? ClassicGroups.Error.UNKNOWN_TOPIC_OR_PARTITION
                                : r.partitionErrors().getOrDefault(new TopicPartition(t.name(), p.partitionIndex()),
                                ClassicGroups.Error.UNKNOWN_TOPIC_OR_PARTITION);
                    }
                    topic.partitions().add(new OffsetCommitResponseData.OffsetCommitResponsePartition()
                            .setPartitionIndex(p.partitionIndex()).setErrorCode(e.code()));
                }
                response.topics().add(topic);
            }
            request.respond(response);
        });
    }
}
