package io.sluice.cli;

import io.sluice.core.SluiceException.InvalidConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code sluice broker}'s settings: one definition each, read from the file, the environment and flags. */
class BrokerSettingsTest {
    @TempDir
    Path dir;

    private static Properties props(String... kv) {
        Properties p = new Properties();
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    @Test
    void aMisspeltKeyInTheConfigFileStopsTheBrokerNamingTheKeyAndItsNearestMatch() throws Exception {
        Path config = dir.resolve("sluice.properties");
        Files.writeString(config, "data.dir=" + dir.resolve("data") + "\nring.szie=65536\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = SluiceCli.run(new String[] {"broker", "--config", config.toString()},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).isEqualTo(SluiceCli.USAGE);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("sluice broker: 'ring.szie' is not a known setting: did you mean 'ring.size'?");
        assertThat(dir.resolve("data")).as("nothing was opened").doesNotExist();
    }

    @Test
    void misspeltHttpAndIngestKeysAreRefusedToo() {
        assertThatThrownBy(() -> BrokerSettings.resolve(props("http.max.body.byte", "1024"), Map.of(), Map.of()))
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("did you mean 'http.max.body.bytes'");
        assertThatThrownBy(() -> BrokerSettings.resolve(props("ingest.orders", "x"), Map.of(), Map.of()))
                .isInstanceOf(InvalidConfigException.class).hasMessageContaining("ingest.<name>.<setting>");
        Properties ingest = props("ingest.orders.topic", "orders", "ingest.orders.clickhouse.url", "http://127.0.0.1:1",
                "ingest.orders.table", "d.t", "ingest.orders.batch.row", "5");
        BrokerSettings.Resolved resolved = BrokerSettings.resolve(ingest, Map.of(), Map.of());
        assertThatThrownBy(() -> io.sluice.ingest.IngestPipeline.configsFromProperties(resolved.ingest()))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("'ingest.orders.batch.row' is not a known setting: did you mean 'ingest.orders.batch.rows'?");
    }

    @Test
    void flagsOverrideTheEnvironmentWhichOverridesTheFile() {
        Properties file = props("ring.size", "128", "port", "7001", "max.connections", "10");
        Map<String, String> env = Map.of("SLUICE_RING_SIZE", "256", "SLUICE_PORT", "7002", "SLUICE_CLICKHOUSE_URL", "http://x",
                "SLUICE_AUTH_TOKEN", "a-token-of-sixteen-chars");
        var values = BrokerSettings.resolve(file, env, Map.of("port", "7003")).values();
        assertThat(values.getInt("ring.size")).isEqualTo(256);
        assertThat(values.getInt("port")).isEqualTo(7003);
        assertThat(values.getInt("max.connections")).isEqualTo(10);
        assertThat(values.getInt("http.port")).isEqualTo(8080);
        assertThat(values.getString("auth.token")).isEqualTo("a-token-of-sixteen-chars");
        assertThat(values.toString()).doesNotContain("a-token-of-sixteen-chars");
    }

    @Test
    void badValuesNameTheKey() {
        assertThatThrownBy(() -> BrokerSettings.resolve(props("ring.size", "1000"), Map.of(), Map.of()))
                .hasMessage("ring.size must be a power of two between 64 and 4194304, got 1000");
        assertThatThrownBy(() -> BrokerSettings.resolve(props(), Map.of(), Map.of("http.port", "x")))
                .hasMessage("http.port must be an integer, got 'x'");
        assertThatThrownBy(() -> BrokerSettings.resolve(props("wait.strategy", "spinny"), Map.of(), Map.of()))
                .hasMessageContaining("wait.strategy must be one of blocking, sleeping, yielding, busy_spin");
        assertThatThrownBy(() -> BrokerSettings.resolve(props("journal.map.bytes", "4194304"), Map.of(), Map.of()))
                .hasMessage("journal.map.bytes must be between 16777216 and 1073741824, got 4194304");
        assertThat(io.sluice.core.BrokerConfig.builder(BrokerSettings.resolve(props("journal.map.bytes", "268435456"),
                Map.of(), Map.of()).values()).build().journalMapBytes()).isEqualTo(256L << 20);
        assertThatThrownBy(() -> BrokerSettings.resolve(props(), Map.of(), Map.of("journal.pretouch.bytes", "4096")))
                .hasMessage("journal.pretouch.bytes must be 0 or between 65536 and 1073741824, got 4096");
        assertThat(io.sluice.core.BrokerConfig.builder(BrokerSettings.resolve(props(), Map.of(),
                Map.of("journal.pretouch.bytes", "0")).values()).build().journalPretouchBytes()).as("--set journal.pretouch.bytes=0: off").isZero();
        assertThat(io.sluice.core.BrokerConfig.builder(BrokerSettings.resolve(props(), Map.of(), Map.of()).values()).build()
                .journalPretouchBytes()).isEqualTo(4L << 20);
    }
}
