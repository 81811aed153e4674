package io.sluice.kafka;

import io.sluice.core.TopicConfig;
import io.sluice.kafka.internal.KafkaApis;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.AbstractResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every version of every row of the handler table, decoded and answered: a plain request of each is sent with the
 * generated classes and its answer must parse and carry no error. Catches a response field set at a version that
 * does not have it (the generated writer refuses it, and the client would see an internal error).
 */
class EveryVersionTest {
    @TempDir
    Path dir;

    @Test
    void eachAdvertisedVersionOfEachApiIsAnsweredWithoutAnError() throws Exception {
        try (KafkaListenerFixture kafka = KafkaListenerFixture.start(dir)) {
            kafka.broker.createTopic(TopicConfig.of("t", 1));
            KafkaApis table = KafkaApis.standard(contextOf(kafka));
            int checked = 0;
            for (KafkaApis.Api api : table.rows()) {
                if (GROUP_APIS.contains(api.key())) {
                    continue; // GroupApisEveryVersionTest: they need a joined member, so each is sent in a sequence
                }
                for (short v = api.minVersion(); v <= api.maxVersion(); v++) {
                    ApiMessage request = request(api.key(), v);
                    try (KafkaWire wire = new KafkaWire(kafka.listener.port())) {
                        AbstractResponse response = wire.call(api.key(), v, request);
                        Map<Errors, Integer> errors = response.errorCounts();
                        assertThat(errors.keySet()).as(api.key() + " v" + v + ": " + response.data())
                                .allMatch(e -> e == Errors.NONE);
                        checked++;
                    }
                }
            }
            assertThat(checked).isGreaterThan(40);
        }
    }

    /** The listener's table, built the way the listener builds it (the handlers are not called). */
    private static io.sluice.kafka.internal.ListenerContext contextOf(KafkaListenerFixture kafka) {
        return new io.sluice.kafka.internal.ListenerContext(kafka.broker, kafka.listener.config(),
                new io.sluice.kafka.internal.KafkaCounters(), Runnable::run, "127.0.0.1");
    }

    private static final java.util.Set<ApiKeys> GROUP_APIS = java.util.EnumSet.of(ApiKeys.FIND_COORDINATOR,
            ApiKeys.JOIN_GROUP, ApiKeys.SYNC_GROUP, ApiKeys.HEARTBEAT, ApiKeys.LEAVE_GROUP, ApiKeys.OFFSET_COMMIT,
            ApiKeys.OFFSET_FETCH, ApiKeys.LIST_GROUPS, ApiKeys.DESCRIBE_GROUPS);

    private static int created;

    private static ApiMessage request(ApiKeys api, short version) {
        return switch (api) {
            case API_VERSIONS -> new ApiVersionsRequestData().setClientSoftwareName("every").setClientSoftwareVersion("1");
            case METADATA -> new MetadataRequestData().setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName("t")));
            case SASL_HANDSHAKE -> new SaslHandshakeRequestData().setMechanism("PLAIN");
            case SASL_AUTHENTICATE -> new SaslAuthenticateRequestData().setAuthBytes("\0u\0p".getBytes(StandardCharsets.UTF_8));
            case PRODUCE -> {
                ProduceRequestData data = new ProduceRequestData().setAcks((short) 1).setTimeoutMs(5000);
                ProduceRequestData.TopicProduceData topic = new ProduceRequestData.TopicProduceData().setName("t");
                topic.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(0)
                        .setRecords(MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("k".getBytes(), "v".getBytes()))));
                data.topicData().add(topic);
                yield data;
            }
            case FETCH -> {
                FetchRequestData data = new FetchRequestData().setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20);
                data.topics().add(new FetchRequestData.FetchTopic().setTopic("t").setPartitions(List.of(
                        new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20))));
                yield data;
            }
            case LIST_OFFSETS -> {
                ListOffsetsRequestData data = new ListOffsetsRequestData().setReplicaId(-1);
                data.topics().add(new ListOffsetsRequestData.ListOffsetsTopic().setName("t").setPartitions(List.of(
                        new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-2))));
                yield data;
            }
            case CREATE_TOPICS -> {
                CreateTopicsRequestData data = new CreateTopicsRequestData().setTimeoutMs(5000);
                data.topics().add(new CreateTopicsRequestData.CreatableTopic().setName("made-" + (created++))
                        .setNumPartitions(1).setReplicationFactor((short) 1));
                yield data;
            }
            case INIT_PRODUCER_ID -> new InitProducerIdRequestData().setTransactionalId(null).setTransactionTimeoutMs(60_000)
                    .setProducerId(-1).setProducerEpoch((short) -1);
            default -> throw new IllegalStateException("no plain request written for " + api + ": add one here");
        };
    }
}
