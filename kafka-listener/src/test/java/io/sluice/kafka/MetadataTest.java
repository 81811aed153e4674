package io.sluice.kafka;

import io.sluice.core.TopicConfig;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MetadataTest {
    @TempDir
    Path dir;

    @Test
    void adminClientSeesThisNodeAsTheOnlyBrokerAndControllerWithAStableClusterId() throws Exception {
        String clusterId;
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir);
             Admin admin = Admin.create(kafka.clientProperties())) {
            kafka.broker.createTopic(TopicConfig.of("orders", 3));
            DescribeClusterResult cluster = admin.describeCluster();
            clusterId = cluster.clusterId().get();
            Node controller = cluster.controller().get();
            assertThat(controller.id()).isEqualTo(kafka.listener.config().nodeId());
            assertThat(cluster.nodes().get()).singleElement().satisfies(node -> {
                assertThat(node.host()).isEqualTo("127.0.0.1");
                assertThat(node.port()).isEqualTo(kafka.listener.port());
            });
            Map<String, TopicDescription> topics = admin.describeTopics(List.of("orders")).allTopicNames().get();
            assertThat(topics.get("orders").partitions()).hasSize(3)
                    .allSatisfy(p -> assertThat(p.leader().id()).isEqualTo(controller.id()));
            assertThat(admin.listTopics().names().get()).containsExactly("orders");
            assertThatThrownBy(() -> admin.describeTopics(List.of("missing")).allTopicNames().get())
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
        }
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir);
             Admin admin = Admin.create(kafka.clientProperties())) {
            assertThat(admin.describeCluster().clusterId().get()).isEqualTo(clusterId);
        }
    }

    @Test
    void anApiVersionsRequestOfAnUnknownVersionIsAnsweredInTheV0LayoutWithUnsupportedVersion() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir);
             Socket socket = new Socket("127.0.0.1", kafka.listener.port())) {
            short future = (short) (ApiKeys.API_VERSIONS.latestVersion() + 10);
            // a future version's header and body cannot be known: send the v2 header and a v3 body with its number
            RequestHeaderData header = new RequestHeaderData().setRequestApiKey(ApiKeys.API_VERSIONS.id)
                    .setRequestApiVersion(future).setCorrelationId(42).setClientId("test");
            ApiVersionsRequestData body = new ApiVersionsRequestData().setClientSoftwareName("t").setClientSoftwareVersion("1");
            ObjectSerializationCache cache = new ObjectSerializationCache();
            int size = header.size(cache, (short) 2) + body.size(cache, (short) 3);
            ByteBuffer out = ByteBuffer.allocate(4 + size).putInt(size);
            ByteBufferAccessor writer = new ByteBufferAccessor(out);
            header.write(writer, cache, (short) 2);
            body.write(writer, cache, (short) 3);
            DataOutputStream os = new DataOutputStream(socket.getOutputStream());
            os.write(out.array());
            os.flush();

            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] response = new byte[in.readInt()];
            in.readFully(response);
            ByteBufferAccessor reader = new ByteBufferAccessor(ByteBuffer.wrap(response));
            assertThat(new ResponseHeaderData(reader, (short) 0).correlationId()).isEqualTo(42);
            ApiVersionsResponseData answer = new ApiVersionsResponseData(reader, (short) 0);
            assertThat(Errors.forCode(answer.errorCode())).isEqualTo(Errors.UNSUPPORTED_VERSION);
            assertThat(answer.apiKeys().find(ApiKeys.API_VERSIONS.id).maxVersion()).isEqualTo((short) 4);
            assertThat(answer.apiKeys().find(ApiKeys.METADATA.id)).isNotNull();
        }
    }
}
