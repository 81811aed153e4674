package io.sluice.core.config;

import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.core.config.ConfigDef.Importance;
import io.sluice.core.config.ConfigDef.Type;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ConfigDefTest {
    private final ConfigDef def = new ConfigDef()
            .define("ring.size", Type.INT, 16_384, Validator.powerOfTwo(64, 1 << 22), Importance.HIGH, "slots per ring")
            .define("retention.ms", Type.LONG, 60_000, Validator.atLeast(1), Importance.LOW, "how often")
            .define("wait.strategy", Type.STRING, "sleeping", Validator.oneOf("sleeping", "blocking"), Importance.MEDIUM, "how to wait")
            .define("io.threads", Type.INT, new ConfigDef.Computed("available processors", () -> 3), Validator.atLeast(1), Importance.LOW, "threads")
            .define("auth.token", Type.PASSWORD, null, Importance.HIGH, "secret")
            .define("native", Type.BOOLEAN, true, Importance.LOW, "epoll");

    @Test
    void absentKeysTakeTheirDefaultsAndGivenOnesAreTyped() {
        ConfigDef.Values v = def.parse(Map.of("ring.size", "65_536", "native", "FALSE"));
        assertThat(v.getInt("ring.size")).isEqualTo(65_536);
        assertThat(v.isSet("ring.size")).isTrue();
        assertThat(v.getLong("retention.ms")).isEqualTo(60_000L);
        assertThat(v.isSet("retention.ms")).isFalse();
        assertThat(v.getString("wait.strategy")).isEqualTo("sleeping");
        assertThat(v.getInt("io.threads")).isEqualTo(3);
        assertThat(v.getString("auth.token")).isNull();
        assertThat(v.getBoolean("native")).isFalse();
    }

    @Test
    void aMisspeltKeyIsAnErrorNamingTheNearestKnownKey() {
        assertThatThrownBy(() -> def.parse(Map.of("ring.szie", "64")))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("'ring.szie' is not a known setting").hasMessageContaining("did you mean 'ring.size'");
        assertThatThrownBy(() -> def.parse(Map.of("ingest.x.ring.sise", "64"), "ingest.x."))
                .hasMessageContaining("'ingest.x.ring.sise'").hasMessageContaining("'ingest.x.ring.size'");
        assertThatThrownBy(() -> def.parse(Map.of("completely.different", "1")))
                .hasMessageContaining("'completely.different' is not a known setting").hasMessageNotContaining("did you mean");
    }

    @Test
    void badValuesNameTheKeyTheValueAndTheRequirement() {
        assertThatThrownBy(() -> def.parse(Map.of("ring.size", "1000")))
                .isInstanceOf(InvalidConfigException.class).hasMessage("ring.size must be a power of two between 64 and 4194304, got 1000");
        assertThatThrownBy(() -> def.parse(Map.of("retention.ms", "soon")))
                .hasMessage("retention.ms must be an integer, got 'soon'");
        assertThatThrownBy(() -> def.parse(Map.of("ring.size", "99999999999")))
                .hasMessageContaining("ring.size").hasMessageContaining("out of range");
        assertThatThrownBy(() -> def.parse(Map.of("wait.strategy", "spin")))
                .hasMessage("wait.strategy must be one of sleeping, blocking, got spin");
        assertThatThrownBy(() -> def.parse(Map.of("native", "yes"))).hasMessageContaining("true or false");
    }

    @Test
    void aDefaultThatFailsItsOwnValidatorIsADefinitionError() {
        assertThatThrownBy(() -> new ConfigDef().define("x", Type.INT, 0, Validator.atLeast(1), Importance.LOW, "x"))
                .hasMessageContaining("x must be >= 1, got 0");
        assertThatThrownBy(() -> new ConfigDef().define("x", Type.INT, 1, Importance.LOW, "x").define("x", Type.INT, 1, Importance.LOW, "x"))
                .hasMessageContaining("defined twice");
    }

    @Test
    void environmentVariablesNameTheKeysInUpperCase() {
        assertThat(def.fromEnvironment(Map.of("SLUICE_RING_SIZE", "128", "SLUICE_HOME", "/x", "PATH", "/bin")))
                .containsExactly(Map.entry("ring.size", "128"));
        assertThat(def.key("auth.token").environmentVariable()).isEqualTo("SLUICE_AUTH_TOKEN");
    }

    @Test
    void theMarkdownTableListsEveryKeyWithItsDefaultAndRequirement() {
        String table = def.toMarkdownTable("");
        assertThat(table.lines()).hasSize(2 + def.keys().size());
        assertThat(table).contains("| `ring.size` | int | 16384 | power of two in [64, 4194304] | high | slots per ring |")
                .contains("| `io.threads` | int | available processors | ≥ 1 | low | threads |");
        assertThat(def.toMarkdownTable("ingest.<name>.")).contains("`ingest.<name>.ring.size`");
    }

    @Test
    void passwordsNeverPrint() {
        assertThat(def.parse(Map.of("auth.token", "s3cr3t-s3cr3t-s3cr3t")).toString()).doesNotContain("s3cr3t").contains("auth.token=(hidden)");
    }

    @Test
    void distanceCountsAnAdjacentSwapAsOneEdit() {
        assertThat(ConfigDef.distance("ring.size", "ring.szie")).isEqualTo(1);
        assertThat(ConfigDef.distance("port", "prot")).isEqualTo(1);
        assertThat(ConfigDef.distance("", "abc")).isEqualTo(3);
        assertThat(ConfigDef.nearest("http.prot", List.of("http.port", "port"))).contains("http.port");
    }
}
