package io.sluice.net.http;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class GaugeRegistryTest {
    @Test
    void namesArePrefixedWithTheComponentAndSanitised() throws Exception {
        GaugeRegistry gauges = new GaugeRegistry();
        AutoCloseable binary = gauges.register("binary", () -> Map.of("connections", 3, "in-flight.requests", 2.5));
        assertThat(gauges.get()).containsExactly(Map.entry("sluice_binary_connections", 3),
                Map.entry("sluice_binary_in_flight_requests", 2.5));
        binary.close();
        assertThat(gauges.get()).isEmpty();
    }

    @Test
    void aFailingComponentIsSkippedWithoutHidingTheOthers() {
        GaugeRegistry gauges = new GaugeRegistry();
        gauges.register("broken", () -> {
            throw new IllegalStateException("boom");
        });
        gauges.register("clickhouse", () -> Map.of("rows_inserted", 42L));
        assertThat(gauges.get()).containsExactly(Map.entry("sluice_clickhouse_rows_inserted", 42L));
    }

    @Test
    void componentNamesAreValidated() {
        GaugeRegistry gauges = new GaugeRegistry();
        assertThatThrownBy(() -> gauges.register("Bad Name", Map::of)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Bad Name");
    }
}
