package io.sluice.kafka.internal;

import io.sluice.core.ClassicGroups;
import io.sluice.core.TopicPartition;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.protocol.Errors;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;

/**
 * OffsetFetch: committed next-offsets, -1 where none (with an empty metadata and no leader epoch). Topics null asks
 * for every committed partition (v2+). Versions 1-7 name one group, 8+ several. Reads are not fenced by member or
 * generation (v9's member epoch belongs to the new consumer protocol).
 */
final class OffsetFetchHandler implements ApiHandler {
    private final ClassicGroups groups;
    private final Executor calls;

    OffsetFetchHandler(ClassicGroups groups, Executor calls) {
        this.groups = groups;
        this.calls = calls;
    }

    @Override
    public void handle(KafkaRequest request) {
        OffsetFetchRequestData data = request.data();
        GroupApis.offLoop(request, calls, () -> {
            OffsetFetchResponseData response = new OffsetFetchResponseData();
            if (request.version() < 8) {
                List<TopicPartition> wanted = null;
                if (data.topics() != null) {
                    wanted = new ArrayList<>();
                    for (OffsetFetchRequestData.OffsetFetchRequestTopic t : data.topics()) {
                        for (int p : t.partitionIndexes()) {
                            wanted.add(new TopicPartition(t.name(), p));
                        }
                    }
                }
                for (Map.Entry<String, Map<Integer, Long>> t : byTopic(groups.committedOffsets(data.groupId(), wanted)).entrySet()) {
                    OffsetFetchResponseData.OffsetFetchResponseTopic topic = new OffsetFetchResponseData.OffsetFetchResponseTopic()
                            .setName(t.getKey());
                    t.getValue().forEach((p, offset) -> topic.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartition()
                            .setPartitionIndex(p).setCommittedOffset(offset).setCommittedLeaderEpoch(-1).setMetadata("")
                            .setErrorCode(Errors.NONE.code())));
                    response.topics().add(topic);
                }
                response.setErrorCode(Errors.NONE.code());
            } else {
                for (OffsetFetchRequestData.OffsetFetchRequestGroup g : data.groups()) {
                    List<TopicPartition> wanted = null;
                    if (g.topics() != null) {
                        wanted = new ArrayList<>();
                        for (OffsetFetchRequestData.OffsetFetchRequestTopics t : g.topics()) {
                            for (int p : t.partitionIndexes()) {
                                wanted.add(new TopicPartition(t.name(), p));
                            }
                        }
                    }
                    OffsetFetchResponseData.OffsetFetchResponseGroup group = new OffsetFetchResponseData.OffsetFetchResponseGroup()
                            .setGroupId(g.groupId()).setErrorCode(Errors.NONE.code());
                    for (Map.Entry<String, Map<Integer, Long>> t : byTopic(groups.committedOffsets(g.groupId(), wanted)).entrySet()) {
                        OffsetFetchResponseData.OffsetFetchResponseTopics topic = new OffsetFetchResponseData.OffsetFetchResponseTopics()
                                .setName(t.getKey());
                        t.getValue().forEach((p, offset) -> topic.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartitions()
                                .setPartitionIndex(p).setCommittedOffset(offset).setCommittedLeaderEpoch(-1).setMetadata("")
                                .setErrorCode(Errors.NONE.code())));
                        group.topics().add(topic);
                    }
                    response.groups().add(group);
                }
            }
            request.respond(response);
        });
    }

    private static Map<String, Map<Integer, Long>> byTopic(Map<TopicPartition, Long> offsets) {
        Map<String, Map<Integer, Long>> out = new LinkedHashMap<>();
        offsets.forEach((tp, offset) -> out.computeIfAbsent(tp.topic(), t -> new LinkedHashMap<>()).put(tp.partition(), offset));
        return out;
    }
}
