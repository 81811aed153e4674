package io.sluice.kafka.internal;

import io.sluice.core.SluiceException;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponseBroker;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponsePartition;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponseTopic;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.MetadataRequest;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.UUID;

/**
 * Metadata: one broker (this node, at the advertised host and port), which is every partition's leader, only
 * replica and in-sync replica, and the controller; the cluster id of the data directory. Topics the broker does not
 * have are answered UNKNOWN_TOPIC_OR_PARTITION (Sluice creates topics explicitly: CreateTopics, {@code sluice
 * topics create}, never on a client's first Metadata). Runs on the event loop: topic and partition lookups are
 * map reads.
 */
final class MetadataHandler implements ApiHandler {
    /** Leader epoch of every partition: a single broker never changes leader. */
    static final int LEADER_EPOCH = 0;

    private final ListenerContext context;

    MetadataHandler(ListenerContext context) {
        this.context = context;
    }

    @Override
    public void handle(KafkaRequest request) {
        MetadataRequest metadata = request.request();
        Collection<String> names = metadata.isAllTopics() ? context.broker().listTopics() : metadata.topics();
        int node = context.nodeId();
        MetadataResponseData response = new MetadataResponseData()
                .setClusterId(context.clusterId())
                .setControllerId(node)
                .setClusterAuthorizedOperations(Integer.MIN_VALUE);
        response.brokers().add(new MetadataResponseBroker().setNodeId(node).setHost(context.advertisedHost())
                .setPort(context.advertisedPort()).setRack(null));
        for (String name : names) {
            response.topics().add(topic(name, node, request.version()));
        }
        request.respond(response);
    }

    private MetadataResponseTopic topic(String name, int node, short version) {
        MetadataResponseTopic topic = new MetadataResponseTopic().setName(name)
                .setIsInternal(false).setTopicAuthorizedOperations(Integer.MIN_VALUE);
        if (version >= 10) { // the generated writer refuses a field its version does not have
            topic.setTopicId(topicId(name));
        }
        int partitions;
        try {
            partitions = context.broker().partitionCount(name);
        } catch (SluiceException.UnknownTopicException e) {
            return topic.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code()).setTopicId(Uuid.ZERO_UUID);
        }
        for (int p = 0; p < partitions; p++) {
            MetadataResponsePartition partition = new MetadataResponsePartition().setPartitionIndex(p).setLeaderId(node)
                    .setReplicaNodes(List.of(node)).setIsrNodes(List.of(node)).setOfflineReplicas(List.of());
            if (version >= 7) {
                partition.setLeaderEpoch(LEADER_EPOCH);
            }
            topic.partitions().add(partition);
        }
        return topic;
    }

    /**
     * A topic's id: derived from its name (a name-based UUID), so it is stable across restarts without being stored.
     * A topic deleted and created again under the same name keeps its id; the listener serves the APIs by name
     * (Produce up to v12, Fetch up to v12), so clients never resolve data by id.
     */
    static Uuid topicId(String name) {
        UUID uuid = UUID.nameUUIDFromBytes(("sluice-topic:" + name).getBytes(StandardCharsets.UTF_8));
        return new Uuid(uuid.getMostSignificantBits(), uuid.getLeastSignificantBits());
    }
}
