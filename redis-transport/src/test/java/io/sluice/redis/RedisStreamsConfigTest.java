package io.sluice.redis;

import io.sluice.core.SluiceException.InvalidConfigException;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RedisStreamsConfigTest {

    @Test
    void keysCarryTheTopicAsAClusterHashTag() {
        RedisStreamsConfig c = RedisStreamsConfig.builder("redis://127.0.0.1:6379").build();
        assertThat(c.streamKey("orders", 3)).isEqualTo("sluice:{orders}:3");
        assertThat(c.deadLetterKey("orders")).isEqualTo("sluice:{orders}:dlq");
    }

    @Test
    void aBadSettingIsRefusedNamingTheSettingAndTheValue() {
        assertThatThrownBy(() -> RedisStreamsConfig.builder("redis://h:1").partitions(0).build())
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("partitions").hasMessageContaining("0");
        assertThatThrownBy(() -> RedisStreamsConfig.builder("http://h:1").build())
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("uri");
        assertThatThrownBy(() -> RedisStreamsConfig.builder("redis://h:1").maxInFlight(0).build())
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("maxInFlight");
        assertThatThrownBy(() -> RedisStreamsConfig.builder("redis://h:1").trimMaxAge(Duration.ZERO).build())
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("trimMaxAge");
        assertThatThrownBy(() -> RedisStreamsConfig.builder("redis://h:1").keyPrefix("a{b}").build())
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("keyPrefix");
        assertThatThrownBy(() -> RedisStreamsConfig.builder("redis://h:1").cluster(true).clusterRefreshMillis(0).build())
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("clusterRefreshMillis");
        assertThatThrownBy(() -> RedisStreamsConfig.builder("redis-socket:///tmp/r.sock").cluster(true).build())
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("cluster");
    }
}
