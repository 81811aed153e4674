package io.sluice.net.metrics;

import io.sluice.net.http.GaugeRegistry;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MetricsRegistryTest {
    static String text(MetricsRegistry r) {
        return new String(r.scrape(null).body(), StandardCharsets.UTF_8);
    }

    @Test
    void countersAndGaugesAreOneLinersWithTheirOwnTypeAndHelp() throws Exception {
        MetricsRegistry r = new MetricsRegistry();
        AtomicLong requests = new AtomicLong(41);
        AutoCloseable counter = r.counter("sluice_test_requests_total", "Requests seen.", requests::get);
        r.gauge("sluice_test_connections", "Open connections.", () -> 3);
        r.gauges("sluice_test_lag_events", "Lag per pipeline.", List.of("pipeline"), s -> {
            s.sample(7, "orders");
            s.sample(0, "clicks");
        });
        requests.incrementAndGet();

        assertThat(text(r)).contains("# HELP sluice_test_requests_total Requests seen.\n# TYPE sluice_test_requests_total counter\nsluice_test_requests_total 42")
                .contains("# TYPE sluice_test_connections gauge\nsluice_test_connections 3")
                .contains("sluice_test_lag_events{pipeline=\"orders\"} 7");
        counter.close();
        assertThat(text(r)).doesNotContain("sluice_test_requests_total");
        assertThatThrownBy(() -> r.counter("sluice_test_requests", "no suffix", () -> 1)).hasMessageContaining("_total");
    }

    @Test
    void latencyHistogramsHaveCumulativeClassicBucketsAndNoNaNWhenEmpty() {
        Histogram nanos = new Histogram(3);
        nanos.recordValue(20_000);       // 20 µs
        nanos.recordValue(3_000_000);    // 3 ms
        nanos.recordValue(3_000_000);
        MetricsRegistry r = new MetricsRegistry();
        r.register(() -> BrokerCollector.histogram("sluice_test_seconds", "A latency.", nanos));
        r.register(() -> BrokerCollector.histogram("sluice_empty_seconds", "Nothing yet.", new Histogram(3)));

        String text = text(r);
        assertThat(text).contains("# TYPE sluice_test_seconds histogram")
                .contains("sluice_test_seconds_bucket{le=\"1.0E-5\"} 0")
                .contains("sluice_test_seconds_bucket{le=\"2.5E-5\"} 1")
                .contains("sluice_test_seconds_bucket{le=\"0.0025\"} 1")
                .contains("sluice_test_seconds_bucket{le=\"0.005\"} 3")
                .contains("sluice_test_seconds_bucket{le=\"+Inf\"} 3")
                .contains("sluice_test_seconds_count 3")
                .contains("sluice_empty_seconds_count 0")
                .doesNotContain("NaN");
    }

    @Test
    @SuppressWarnings("deprecation")
    void theOldMapRegistrationTypesTotalsAsCounters() throws Exception {
        GaugeRegistry gauges = new GaugeRegistry();
        AutoCloseable h = gauges.register("binary", () -> Map.of("connections", 3, "requests_total", 9));
        assertThat(text(gauges)).contains("# TYPE sluice_binary_requests_total counter")
                .contains("# TYPE sluice_binary_connections gauge").contains("sluice_binary_connections 3");
        h.close();
        assertThat(text(gauges)).doesNotContain("sluice_binary");
        assertThatThrownBy(() -> gauges.register("Bad Name", Map::of)).isInstanceOf(IllegalArgumentException.class);
    }
}
