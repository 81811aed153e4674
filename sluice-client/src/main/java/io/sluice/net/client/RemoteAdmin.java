package io.sluice.net.client;

import io.sluice.core.GroupStatus;
import io.sluice.core.OffsetResetPlan;
import io.sluice.core.OffsetResetSpec;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicDescription;
import io.sluice.core.TopicPartition;
import io.sluice.net.client.internal.Connector;
import io.sluice.net.protocol.Admin;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.ApiVersions;
import io.sluice.net.protocol.CreateTopic;
import io.sluice.net.protocol.ListOffsets;
import io.sluice.net.protocol.Metadata;
import io.sluice.net.protocol.Wire;

import java.util.ArrayList;
import java.util.List;

/**
 * Topic and consumer-group administration over the network, mirroring the topic methods of the embedded
 * {@code Broker} and its {@code GroupAdmin}. Blocking calls, each bounded by {@code requestTimeoutMillis}; thread-safe.
 */
public final class RemoteAdmin implements AutoCloseable {
    private final Connector connector;

    public RemoteAdmin(String bootstrap) {
        this(ClientConfig.of(bootstrap));
    }

    public RemoteAdmin(ClientConfig config) {
        this.connector = new Connector(config, "admin");
        try {
            connector.connected();
        } catch (RuntimeException e) {
            connector.close();
            throw e;
        }
    }

    /** @throws SluiceException.TopicExistsException if it exists */
    public TopicDescription createTopic(TopicConfig config) {
        return create(config, false);
    }

    public TopicDescription createTopicIfAbsent(TopicConfig config) {
        return create(config, true);
    }

    private TopicDescription create(TopicConfig config, boolean ifAbsent) {
        return call(ApiKey.CREATE_TOPIC, new CreateTopic.Request(config, ifAbsent)::encode,
                in -> CreateTopic.Response.decode(in, config.name()).description());
    }

    /** Topic names, sorted. */
    public List<String> listTopics() {
        List<String> names = new ArrayList<>();
        for (Metadata.TopicResult t : metadata(List.of()).topics()) {
            names.add(t.name());
        }
        return names;
    }

    /** Every topic's description. */
    public List<TopicDescription> describeTopics() {
        List<TopicDescription> result = new ArrayList<>();
        for (Metadata.TopicResult t : metadata(List.of()).topics()) {
            if (t.error() == SluiceException.Code.NONE) {
                result.add(t.description());
            }
        }
        return result;
    }

    /** @throws SluiceException.UnknownTopicException if it does not exist */
    public TopicDescription describeTopic(String topic) {
        Metadata.TopicResult t = metadata(List.of(topic)).topics().get(0);
        if (t.error() != SluiceException.Code.NONE) {
            throw SluiceException.fromCode(t.error(), t.errorMessage());
        }
        return t.description();
    }

    /** @throws SluiceException.UnknownTopicException if it does not exist */
    public void deleteTopic(String topic) {
        call(ApiKey.DELETE_TOPIC, out -> Wire.writeString(out, topic), in -> null);
    }

    /** Changes a topic's retention (-1: unlimited); returns its new description. */
    public TopicDescription alterTopic(String topic, long retentionMillis, long retentionBytes) {
        return call(ApiKey.ALTER_TOPIC, new Admin.AlterRequest(topic, retentionMillis, retentionBytes)::encode,
                in -> Metadata.readDescription(in, topic));
    }

    /** Consumer groups with live members or committed offsets, sorted. */
    public List<String> listGroups() {
        return call(ApiKey.LIST_GROUPS, out -> { }, Admin::readGroupList);
    }

    /** A group's members, committed offsets and lag per partition. */
    public GroupStatus describeGroup(String groupId) {
        return call(ApiKey.DESCRIBE_GROUP, out -> Wire.writeString(out, groupId), Admin::readGroupStatus);
    }

    /**
     * Plans (and with {@code execute}, commits) an offset reset of {@code groupId} on every partition of {@code topic}.
     *
     * @throws SluiceException.NonEmptyGroupException when executing while the group has live members
     */
    public OffsetResetPlan resetOffsets(String groupId, String topic, OffsetResetSpec spec, boolean execute) {
        return call(ApiKey.RESET_OFFSETS, new Admin.ResetRequest(groupId, topic, spec, execute)::encode,
                in -> Admin.readResetPlan(in, groupId, topic));
    }

    public long startOffset(TopicPartition partition) {
        return offsets(partition).startOffset();
    }

    public long endOffset(TopicPartition partition) {
        return offsets(partition).endOffset();
    }

    /** The broker's version string (API_VERSIONS). */
    public String serverVersion() {
        return call(ApiKey.API_VERSIONS, out -> { }, ApiVersions.Response::decode).serverVersion();
    }

    private ListOffsets.PartitionOffsets offsets(TopicPartition tp) {
        return call(ApiKey.LIST_OFFSETS, ListOffsets.Request.ranges(tp.topic(), List.of(tp.partition()))::encode,
                ListOffsets.Response::decode).partitions().get(0);
    }

    private Metadata.Response metadata(List<String> topics) {
        return call(ApiKey.METADATA, new Metadata.Request(topics)::encode, Metadata.Response::decode);
    }

    private <T> T call(ApiKey api, java.util.function.Consumer<io.netty.buffer.ByteBuf> body,
                       java.util.function.Function<io.netty.buffer.ByteBuf, T> decoder) {
        return connector.connected().call(api, body, decoder, connector.config().requestTimeoutMillis());
    }

    @Override
    public void close() {
        connector.close();
    }
}
