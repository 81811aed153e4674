package io.sluice.ingest;

import io.sluice.core.SluiceException.InvalidConfigException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class IngestConfigTest {

    private static Properties props(String... kv) {
        Properties p = new Properties();
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    @Test
    void aBrokerConfigSectionBecomesAValidatedPipelineConfig() {
        Properties p = props(
                "ingest.orders.topic", "orders",
                "ingest.orders.clickhouse.url", "http://127.0.0.1:8123",
                "ingest.orders.clickhouse.user.env", "CH_USER",
                "ingest.orders.clickhouse.password.env", "CH_PASSWORD",
                "ingest.orders.table", "shop.orders",
                "ingest.orders.strategy", "worker-pool",
                "ingest.orders.batch.rows", "20_000",
                "ingest.orders.linger.ms", "25",
                "ingest.orders.workers", "4",
                "ingest.orders.redis.url", "redis://127.0.0.1:6379",
                "broker.port", "9092");
        IngestConfig c = IngestConfig.fromProperties(p, "ingest.orders.", Map.of("CH_USER", "ingest", "CH_PASSWORD", "s3cret")::get);
        assertThat(c.name()).isEqualTo("orders");
        assertThat(c.topic()).isEqualTo("orders");
        assertThat(c.user()).isEqualTo("ingest");
        assertThat(c.password()).isEqualTo("s3cret");
        assertThat(c.strategy()).isEqualTo(Strategy.WORKER_POOL);
        assertThat(c.batchRows()).isEqualTo(20_000);
        assertThat(c.workers()).isEqualTo(4);
        assertThat(c.redisStream()).isEqualTo("sluice:shop.orders");
        assertThat(c.group()).isEqualTo("sluice-ingest-orders");
        assertThat(c.deadLetterTable()).isEqualTo("shop.orders_dead_letters");
        assertThat(c.toString()).doesNotContain("s3cret");
        assertThat(IngestPipeline.sectionNames(p, "ingest.")).containsExactly("orders");
    }

    @Test
    void aRedisClusterStreamCarriesAHashTagSoItsCompanionKeysShareItsSlot() {
        IngestConfig c = IngestConfig.fromProperties(props("x.clickhouse.url", "http://h:1", "x.table", "shop.orders",
                "x.strategy", "redis-stream", "x.redis.url", "redis://10.0.0.1:6379,10.0.0.2:6379", "x.redis.cluster", "true"), "x.");
        assertThat(c.redisCluster()).isTrue();
        assertThat(c.redisStream()).isEqualTo("sluice:{shop.orders}");
        assertThat(IngestConfig.hashTag(c.redisStream() + ":dead-letters")).isEqualTo("shop.orders");
        assertThat(c.redisClusterRefreshMs()).isEqualTo(10_000);
        assertThatThrownBy(() -> IngestConfig.fromProperties(props("x.clickhouse.url", "http://h:1", "x.table", "shop.orders",
                "x.strategy", "worker-pool", "x.redis.url", "redis://h:1", "x.redis.cluster", "true",
                "x.redis.stream", "orders"), "x."))
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("redis.stream").hasMessageContaining("hash tag");
        assertThat(IngestConfig.hashTag("a{}b{c}")).isNull(); // Redis hashes the whole key when the first {} is empty
        assertThat(IngestConfig.fromProperties(props("x.clickhouse.url", "http://h:1", "x.table", "shop.orders"), "x.")
                .redisStream()).isEqualTo("sluice:shop.orders"); // one server: unchanged
    }

    @Test
    void invalidValuesAreRefusedNamingTheSettingAndTheValue() {
        assertThatThrownBy(() -> IngestConfig.fromProperties(props("x.clickhouse.url", "http://h:1", "x.table", "t"), "x."))
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("table").hasMessageContaining("db.table");
        assertThatThrownBy(() -> IngestConfig.fromProperties(props("x.clickhouse.url", "http://h:1", "x.table", "d.t",
                "x.strategy", "turbo"), "x."))
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("x.strategy").hasMessageContaining("turbo")
                .hasMessageContaining("coalescing");
        assertThatThrownBy(() -> IngestConfig.fromProperties(props("x.clickhouse.url", "http://h:1", "x.table", "d.t",
                "x.batch.rows", "0"), "x."))
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("batch.rows").hasMessageContaining("0");
        assertThatThrownBy(() -> IngestConfig.fromProperties(props("x.clickhouse.url", "http://h:1", "x.table", "d.t",
                "x.strategy", "redis-stream"), "x."))
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("redis.url");
        assertThatThrownBy(() -> IngestConfig.fromProperties(props("x.clickhouse.url", "http://h:1", "x.table", "d.t",
                "x.lingr.ms", "5"), "x."))
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("x.lingr.ms").hasMessageContaining("not a known");
        assertThatThrownBy(() -> IngestConfig.fromProperties(props("x.clickhouse.url", "http://h:1", "x.table", "d.t",
                "x.clickhouse.password.env", "NO_SUCH_VAR_FOR_SLUICE"), "x.", k -> null))
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("NO_SUCH_VAR_FOR_SLUICE");
    }

    @Test
    void clusterAndKafkaSettingsAreParsedAndValidated() {
        IngestConfig c = IngestConfig.fromProperties(props("x.clickhouse.shards", "http://a1:8123,http://a2:8123;http://b1:8123",
                "x.clickhouse.shard.by", "random", "x.table", "d.t_local", "x.strategy", "journal", "x.topic", "t",
                "x.source", "kafka", "x.kafka.bootstrap", "k1:9092,k2:9092"), "x.");
        assertThat(c.shards()).containsExactly(List.of("http://a1:8123", "http://a2:8123"), List.of("http://b1:8123"));
        assertThat(c.clickHouseUrl()).isEqualTo("http://a1:8123"); // the table description and dead letters: shard 1
        assertThat(c.shardBy()).isEqualTo(IngestConfig.ShardBy.RANDOM);
        assertThat(c.source()).isEqualTo(IngestConfig.Source.KAFKA);
        assertThat(c.kafkaBootstrap()).isEqualTo("k1:9092,k2:9092");
        assertThatThrownBy(() -> IngestConfig.fromProperties(props("x.clickhouse.shards", "http://a1:8123;;http://b1:8123",
                "x.table", "d.t", "x.strategy", "journal"), "x."))
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("x.clickhouse.shards").hasMessageContaining("empty shard");
        assertThatThrownBy(() -> IngestConfig.fromProperties(props("x.clickhouse.shards", "http://a1:8123;http://b1:8123",
                "x.table", "d.t", "x.strategy", "coalescing"), "x."))
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("Distributed table");
        assertThatThrownBy(() -> IngestConfig.fromProperties(props("x.clickhouse.url", "http://h:1", "x.table", "d.t",
                "x.strategy", "journal", "x.source", "kafka"), "x."))
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("kafka.bootstrap");
    }

    @Test
    void credentialsInTheRedisAndClickHouseUrlsNeverAppearInToString() {
        IngestConfig c = IngestConfig.builder("x").clickHouseUrl("http://ingest:chpass@127.0.0.1:8123/?password=qp")
                .table("d.t").strategy(Strategy.REDIS_STREAM).redisUrl("redis://default:r3dis-secret@10.0.0.1:6379/0").build();
        assertThat(c.toString()).doesNotContain("r3dis-secret").doesNotContain("chpass").doesNotContain("qp")
                .contains("redis://***@10.0.0.1:6379/0").contains("http://***@127.0.0.1:8123/?password=***");
        assertThat(IngestConfig.redact("redis://:only-password@h:6379")).isEqualTo("redis://***@h:6379");
        assertThat(IngestConfig.redact("redis://h:6379")).isEqualTo("redis://h:6379");
    }
}
