package io.sluice.bench.scenario.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.sluice.testkit.RedisServer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class LagGuardTest {
    @Test
    void theGuardReadsTheGroupsLagAndLetsWritesThroughBelowTheHighWaterMark() throws Exception {
        Assumptions.assumeTrue(RedisServer.isInstalled(), "redis-server is installed");
        try (RedisServer server = RedisServer.startPrivate(Path.of(System.getProperty("java.io.tmpdir")), false)) {
            RedisClient client = RedisClient.create(server.url());
            try (StatefulRedisConnection<String, String> c = client.connect();
                 LagGuard guard = new LagGuard(client, "g")) {
                c.sync().xgroupCreate(XReadArgs.StreamOffset.from("s", "$"), "g", XGroupCreateArgs.Builder.mkstream(true));
                byte[] stream = "s".getBytes();
                for (int i = 0; i < LagGuard.CHECK_EVERY * 2; i++) {
                    c.sync().xadd("s", "data", "x" + i);
                    guard.afterWrite(stream, () -> { });
                }
                assertThat(guard.waits()).isZero();
                assertThat(guard.lag(stream)).isEqualTo(LagGuard.CHECK_EVERY * 2L);
                assertThat(c.sync().xlen("s")).isEqualTo(LagGuard.CHECK_EVERY * 2L);
            } finally {
                client.shutdown();
            }
        }
    }
}
