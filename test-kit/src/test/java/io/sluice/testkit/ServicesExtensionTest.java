package io.sluice.testkit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

@ExtendWith(ServicesExtension.class)
class ServicesExtensionTest {

    @Test
    void clickHouseKeepsItsTablesAcrossARestart(ClickHouseServer clickHouse) {
        String db = clickHouse.createDatabase("fixture");
        clickHouse.execute("CREATE TABLE " + db + ".t (x UInt64) ENGINE = MergeTree ORDER BY x");
        clickHouse.execute("INSERT INTO " + db + ".t VALUES (1), (2), (3)");
        assumeTrue(clickHouse.isPrivate(), "external server: restart not tested");
        clickHouse.stop();
        assertThat(clickHouse.isRunning()).isFalse();
        clickHouse.start();
        assertThat(clickHouse.queryLong("SELECT sum(x) FROM " + db + ".t")).isEqualTo(6);
    }

    @Test
    void redisKeepsItsStreamsAcrossARestart(RedisServer redis) {
        redis.command("DEL", "fixture-stream");
        redis.command("XADD", "fixture-stream", "*", "e", "1");
        redis.command("XADD", "fixture-stream", "*", "e", "2");
        assumeTrue(redis.isPrivate(), "external server: restart not tested");
        redis.restart();
        assertThat(redis.commandLong("XLEN", "fixture-stream")).isEqualTo(2);
    }
}
