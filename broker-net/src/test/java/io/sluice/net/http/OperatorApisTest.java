package io.sluice.net.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.GroupStatus;
import io.sluice.core.OffsetReset;
import io.sluice.core.OffsetResetPlan;
import io.sluice.core.OffsetResetSpec;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.net.client.RemoteAdmin;
import io.sluice.net.testing.TestBroker;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;

import static io.sluice.net.http.HttpTestSupport.client;
import static io.sluice.net.http.HttpTestSupport.get;
import static io.sluice.net.http.HttpTestSupport.json;
import static io.sluice.net.http.HttpTestSupport.post;
import static io.sluice.net.http.HttpTestSupport.send;
import static io.sluice.net.http.HttpTestSupport.uri;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Group and topic administration over the binary protocol ({@link RemoteAdmin}) and HTTP, against one real broker. */
class OperatorApisTest {
    @TempDir
    static Path dataDir;
    static TestBroker broker;
    static HttpApiServer http;
    static HttpClient client = client();

    @BeforeAll
    static void start() {
        broker = TestBroker.start(dataDir);
        http = new HttpApiServer(HttpApiConfig.builder().port(0).build(), broker.broker, null);
    }

    @AfterAll
    static void stop() {
        http.close();
        broker.close();
    }

    static void produce(String topic, int partitions, int perPartition) {
        try (var producer = broker.broker.newProducer(io.sluice.core.ProducerConfig.DEFAULT)) {
            for (int p = 0; p < partitions; p++) {
                for (int i = 0; i < perPartition; i++) {
                    producer.send(io.sluice.core.ProducerRecord.of(topic, null, "e" + i).withPartition(p)).join();
                }
            }
        }
    }

    static Consumer liveMember(String group, String topic) {
        Consumer c = broker.broker.newConsumer(ConsumerConfig.builder().groupId(group).clientId("member")
                .offsetReset(OffsetReset.EARLIEST).sessionTimeoutMillis(60_000).build());
        c.subscribe(topic);
        return c;
    }

    @Test
    void theBinaryProtocolListsDescribesAndResetsGroups() {
        broker.broker.createTopic(TopicConfig.of("bin-orders", 2));
        produce("bin-orders", 2, 5);
        try (RemoteAdmin admin = new RemoteAdmin(broker.bootstrap())) {
            Consumer member = liveMember("bin-billing", "bin-orders");
            member.commitSync(Map.of(new TopicPartition("bin-orders", 0), 2L));

            assertThat(admin.listGroups()).contains("bin-billing");
            GroupStatus s = admin.describeGroup("bin-billing");
            assertThat(s.topic()).isEqualTo("bin-orders");
            assertThat(s.members()).hasSize(1);
            assertThat(s.partitions()).extracting(GroupStatus.PartitionLag::committed).containsExactly(2L, -1L);
            assertThat(s.partitions()).extracting(GroupStatus.PartitionLag::lag).containsExactly(3L, 5L);

            assertThat(admin.resetOffsets("bin-billing", "bin-orders", OffsetResetSpec.toLatest(), false).executed()).isFalse();
            assertThatThrownBy(() -> admin.resetOffsets("bin-billing", "bin-orders", OffsetResetSpec.toLatest(), true))
                    .isInstanceOf(SluiceException.NonEmptyGroupException.class);
            member.close();
            OffsetResetPlan done = admin.resetOffsets("bin-billing", "bin-orders", OffsetResetSpec.toLatest(), true);
            assertThat(done.executed()).isTrue();
            assertThat(admin.describeGroup("bin-billing").totalLag()).isZero();

            assertThatThrownBy(() -> admin.describeGroup("nobody"))
                    .isInstanceOf(SluiceException.class)
                    .satisfies(e -> assertThat(((SluiceException) e).code()).isEqualTo(SluiceException.Code.GROUP_NOT_FOUND));
        }
    }

    @Test
    void theBinaryProtocolAltersAndDeletesTopics() {
        try (RemoteAdmin admin = new RemoteAdmin(broker.bootstrap())) {
            admin.createTopic(TopicConfig.of("bin-temp", 1));
            assertThat(admin.alterTopic("bin-temp", 86_400_000L, -1).config().retentionMillis()).isEqualTo(86_400_000L);
            assertThatThrownBy(() -> admin.alterTopic("bin-temp", -5, -1)).isInstanceOf(SluiceException.InvalidConfigException.class);
            admin.deleteTopic("bin-temp");
            assertThat(admin.listTopics()).doesNotContain("bin-temp");
            assertThatThrownBy(() -> admin.deleteTopic("bin-temp")).isInstanceOf(SluiceException.UnknownTopicException.class);
        }
    }

    @Test
    void httpDescribesGroupsWithLagAndResetsThemOnlyWhenEmpty() {
        broker.broker.createTopic(TopicConfig.of("http-orders", 2));
        produce("http-orders", 2, 4);
        Consumer member = liveMember("http-billing", "http-orders");
        member.commitSync(Map.of(new TopicPartition("http-orders", 0), 4L, new TopicPartition("http-orders", 1), 1L));

        JsonNode groups = json(get(client, http, "/v1/groups"));
        JsonNode g = null;
        for (JsonNode n : groups.get("groups")) {
            if (n.get("group").asText().equals("http-billing")) {
                g = n;
            }
        }
        assertThat(g).as(groups.toString()).isNotNull();
        assertThat(g.get("state").asText()).isEqualTo("Stable");
        assertThat(g.get("lag").asLong()).isEqualTo(3);
        assertThat(g.get("partitions").get(1).get("committed").asLong()).isEqualTo(1);

        String reset = "{\"topic\":\"http-orders\",\"reset\":\"shift-by\",\"value\":-1,\"execute\":true}";
        HttpResponse<String> refused = post(client, http, "/v1/groups/http-billing/reset-offsets", reset);
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(409);
        assertThat(json(refused).get("code").asText()).isEqualTo("NON_EMPTY_GROUP");

        member.close();
        HttpResponse<String> dry = post(client, http, "/v1/groups/http-billing/reset-offsets",
                "{\"topic\":\"http-orders\",\"reset\":\"to-datetime\",\"value\":\"2000-01-01T00:00:00Z\"}");
        assertThat(dry.statusCode()).as(dry.body()).isEqualTo(200);
        assertThat(json(dry).get("executed").asBoolean()).isFalse();
        assertThat(json(dry).get("partitions").get(0).get("target").asLong()).isZero();

        HttpResponse<String> done = post(client, http, "/v1/groups/http-billing/reset-offsets", reset);
        assertThat(done.statusCode()).as(done.body()).isEqualTo(200);
        JsonNode after = json(get(client, http, "/v1/groups/http-billing"));
        assertThat(after.get("partitions").get(0).get("committed").asLong()).isEqualTo(3);
        assertThat(after.get("partitions").get(1).get("committed").asLong()).isEqualTo(0);

        assertThat(get(client, http, "/v1/groups/nobody").statusCode()).isEqualTo(404);
        HttpResponse<String> bad = post(client, http, "/v1/groups/http-billing/reset-offsets", "{\"topic\":\"http-orders\",\"reset\":\"to-moon\"}");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("to-moon");
    }

    @Test
    void httpAltersRetentionAndDeletesTopics() {
        broker.broker.createTopic(TopicConfig.of("http-temp", 1));
        HttpResponse<String> altered = send(client, HttpRequest.newBuilder(uri(http, "/v1/topics/http-temp"))
                .method("PATCH", HttpRequest.BodyPublishers.ofString("{\"retentionBytes\":1048576}")).build());
        assertThat(altered.statusCode()).as(altered.body()).isEqualTo(200);
        assertThat(json(altered).get("retentionBytes").asLong()).isEqualTo(1048576);
        assertThat(json(altered).get("retentionMillis").asLong()).isEqualTo(-1);

        HttpResponse<String> deleted = send(client, HttpRequest.newBuilder(uri(http, "/v1/topics/http-temp")).DELETE().build());
        assertThat(deleted.statusCode()).as(deleted.body()).isEqualTo(200);
        assertThat(broker.broker.listTopics()).doesNotContain("http-temp");
        assertThat(send(client, HttpRequest.newBuilder(uri(http, "/v1/topics/http-temp")).DELETE().build()).statusCode()).isEqualTo(404);
    }
}
