package io.sluice.kafka.internal;

import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicDescription;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopic;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopicConfig;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.CreateTopicsResponseData.CreatableTopicResult;
import org.apache.kafka.common.protocol.Errors;

import java.util.Set;

/**
 * CreateTopics on the admin thread (creating a topic makes files). Partitions default to 1 (Kafka's
 * num.partitions); the replication factor must be 1 or -1 (one broker); explicit replica assignments are refused.
 * Topic configs: {@code retention.ms} and {@code retention.bytes} map onto the topic's retention; a few that state
 * what Sluice does anyway ({@code cleanup.policy=delete}, replication and segment settings) are accepted and
 * ignored; anything else is INVALID_CONFIG naming the key, so a client never believes a setting took effect.
 */
final class CreateTopicsHandler implements ApiHandler {
    private static final Set<String> IGNORED = Set.of("min.insync.replicas", "segment.bytes", "segment.ms",
            "unclean.leader.election.enable", "message.timestamp.type", "compression.type", "max.message.bytes");

    private final ListenerContext context;

    CreateTopicsHandler(ListenerContext context) {
        this.context = context;
    }

    @Override
    public void handle(KafkaRequest request) {
        CreateTopicsRequestData data = request.data();
        context.admin().execute(() -> {
            try {
                CreateTopicsResponseData response = new CreateTopicsResponseData();
                for (CreatableTopic topic : data.topics()) {
                    CreatableTopicResult result = create(topic, data.validateOnly());
                    if (request.version() < 5) { // fields of v5+: the generated writer refuses them earlier
                        result.setNumPartitions(-1).setReplicationFactor((short) -1);
                    }
                    if (request.version() < 7) {
                        result.setTopicId(org.apache.kafka.common.Uuid.ZERO_UUID);
                    }
                    response.topics().add(result);
                }
                request.respond(response);
            } catch (RuntimeException e) {
                request.fail(e);
            }
        });
    }

    private CreatableTopicResult create(CreatableTopic topic, boolean validateOnly) {
        CreatableTopicResult result = new CreatableTopicResult().setName(topic.name())
                .setNumPartitions(-1).setReplicationFactor((short) -1);
        try {
            if (topic.replicationFactor() != -1 && topic.replicationFactor() != 1) {
                return error(result, Errors.INVALID_REPLICATION_FACTOR, "Sluice has one broker: replication factor must be 1, got "
                        + topic.replicationFactor());
            }
            if (!topic.assignments().isEmpty()) {
                return error(result, Errors.INVALID_REPLICA_ASSIGNMENT, "replica assignments are not supported (one broker)");
            }
            if (topic.numPartitions() != -1 && (topic.numPartitions() < 1 || topic.numPartitions() > TopicConfig.MAX_PARTITIONS)) {
                return error(result, Errors.INVALID_PARTITIONS, "partitions must be between 1 and "
                        + TopicConfig.MAX_PARTITIONS + ", got " + topic.numPartitions());
            }
            TopicConfig.Builder config = TopicConfig.builder(topic.name())
                    .partitions(topic.numPartitions() == -1 ? 1 : topic.numPartitions());
            for (CreatableTopicConfig c : topic.configs()) {
                String value = c.value();
                switch (c.name()) {
                    case "retention.ms" -> config.retentionMillis(Long.parseLong(value));
                    case "retention.bytes" -> config.retentionBytes(Long.parseLong(value));
                    case "cleanup.policy" -> {
                        if (!"delete".equals(value)) {
                            return error(result, Errors.INVALID_CONFIG, "cleanup.policy=" + value + " is not supported (Sluice deletes by retention)");
                        }
                    }
                    default -> {
                        if (!IGNORED.contains(c.name())) {
                            return error(result, Errors.INVALID_CONFIG, "topic config '" + c.name() + "' is not supported "
                                    + "(supported: retention.ms, retention.bytes, cleanup.policy=delete)");
                        }
                    }
                }
            }
            TopicConfig built = config.build();
            if (validateOnly) {
                if (context.broker().listTopics().contains(topic.name())) {
                    return error(result, Errors.TOPIC_ALREADY_EXISTS, "topic '" + topic.name() + "' already exists");
                }
                return result.setNumPartitions(built.partitions()).setReplicationFactor((short) 1);
            }
            TopicDescription created = context.broker().createTopic(built);
            return result.setTopicId(MetadataHandler.topicId(topic.name())).setNumPartitions(created.partitions().size())
                    .setReplicationFactor((short) 1);
        } catch (NumberFormatException e) {
            return error(result, Errors.INVALID_CONFIG, "not a number: " + e.getMessage());
        } catch (SluiceException | IllegalArgumentException e) {
            Errors code = e instanceof SluiceException.TopicExistsException ? Errors.TOPIC_ALREADY_EXISTS
                    : e instanceof SluiceException se ? KafkaRequest.errorOf(se) : Errors.INVALID_REQUEST;
            return error(result, code, e.getMessage());
        }
    }

    private static CreatableTopicResult error(CreatableTopicResult result, Errors error, String message) {
        return result.setErrorCode(error.code()).setErrorMessage(message);
    }
}
