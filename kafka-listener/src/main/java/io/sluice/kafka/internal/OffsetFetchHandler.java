package io.sluice.kafka.internal;

import io.sluice.core.ClassicGroups;
import io.sluice.core.TopicPartition;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseGroup;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponsePartition;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponsePartitions;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseTopic;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseTopics;
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
                        partitions(t.name(), t.partitionIndexes(), wanted);
                    }
                }
                byTopic(groups.committedOffsets(data.groupId(), wanted)).forEach((topic, offsets) -> {
                    OffsetFetchResponseTopic out = new OffsetFetchResponseTopic().setName(topic);
                    offsets.forEach((p, offset) -> out.partitions().add(new OffsetFetchResponsePartition()
                            .setPartitionIndex(p).setCommittedOffset(offset).setCommittedLeaderEpoch(-1).setMetadata("")));
                    response.topics().add(out);
                });
                response.setErrorCode(Errors.NONE.code());
            } else {
                for (OffsetFetchRequestData.OffsetFetchRequestGroup g : data.groups()) {
                    List<TopicPartition> wanted = null;
                    if (g.topics() != null) {
                        wanted = new ArrayList<>();
                        for (OffsetFetchRequestData.OffsetFetchRequestTopics t : g.topics()) {
                            partitions(t.name(), t.partitionIndexes(), wanted);
                        }
                    }
                    OffsetFetchResponseGroup group = new OffsetFetchResponseGroup().setGroupId(g.groupId());
                    byTopic(groups.committedOffsets(g.groupId(), wanted)).forEach((topic, offsets) -> {
                        OffsetFetchResponseTopics out = new OffsetFetchResponseTopics().setName(topic);
                        offsets.forEach((p, offset) -> out.partitions().add(new OffsetFetchResponsePartitions()
                                .setPartitionIndex(p).setCommittedOffset(offset).setCommittedLeaderEpoch(-1).setMetadata("")));
                        group.topics().add(out);
                    });
                    response.groups().add(group);
                }
            }
            request.respond(response);
        });
    }

    private static void partitions(String topic, List<Integer> indexes, List<TopicPartition> out) {
        for (int p : indexes) {
            if (topic != null && p >= 0) {
                out.add(new TopicPartition(topic, p));
            }
        }
    }

    private static Map<String, Map<Integer, Long>> byTopic(Map<TopicPartition, Long> offsets) {
        Map<String, Map<Integer, Long>> out = new LinkedHashMap<>();
        offsets.forEach((tp, offset) -> out.computeIfAbsent(tp.topic(), t -> new LinkedHashMap<>()).put(tp.partition(), offset));
        return out;
    }
}
