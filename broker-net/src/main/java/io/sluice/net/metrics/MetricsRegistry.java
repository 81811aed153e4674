package io.sluice.net.metrics;

import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.DoubleSupplier;

/**
 * The process's metrics, exposed on {@code GET /metrics} through the Prometheus Java client
 * ({@code prometheus-metrics-core}; text, OpenMetrics or protobuf by content negotiation). Every component registers
 * its series here with one call; each call returns a handle whose {@code close()} removes them.
 *
 * <pre>{@code
 * MetricsRegistry metrics = new MetricsRegistry();
 * metrics.counter("sluice_binary_requests_total", "Requests received on the binary port.", () -> stats.requests());
 * metrics.gauge("sluice_binary_connections_active", "Open binary connections.", server::connectionCount);
 * metrics.gauges("sluice_ingest_behind_events", "Events of the topic not yet landed.", List.of("pipeline"),
 *         s -> s.sample(pipeline.behind(), pipeline.name()));
 * }</pre>
 *
 * <p>Callbacks run on every scrape, on an HTTP I/O thread: they must be cheap, thread-safe and non-blocking (read
 * volatile or {@code LongAdder} counters). A counter's name ends in {@code _total}; its value never decreases.
 * Thread-safe.
 */
public class MetricsRegistry {
    private static final ExpositionFormats FORMATS = ExpositionFormats.init();
    private final PrometheusRegistry registry = new PrometheusRegistry();

    /** Values of a labelled family, one call per series: {@code sample(value, labelValue1, labelValue2, ...)}. */
    @FunctionalInterface
    public interface Samples {
        void sample(double value, String... labelValues);
    }

    /** The underlying registry, for collectors built with the Prometheus client directly. */
    public PrometheusRegistry prometheus() {
        return registry;
    }

    /** A counter read from {@code value} on each scrape. {@code name} must end in {@code _total}. */
    public AutoCloseable counter(String name, String help, DoubleSupplier value) {
        return counters(name, help, List.of(), s -> s.sample(value.getAsDouble()));
    }

    /** A gauge read from {@code value} on each scrape. */
    public AutoCloseable gauge(String name, String help, DoubleSupplier value) {
        return gauges(name, help, List.of(), s -> s.sample(value.getAsDouble()));
    }

    /** A labelled counter family; {@code values} reports every series on each scrape. */
    public AutoCloseable counters(String name, String help, List<String> labelNames, Consumer<Samples> values) {
        if (!name.endsWith("_total")) {
            throw new IllegalArgumentException("a counter's name ends in _total, got '" + name + "'");
        }
        CounterWithCallback c = CounterWithCallback.builder().name(name).help(help)
                .labelNames(labelNames.toArray(String[]::new))
                .callback(cb -> values.accept(cb::call))
                .build();
        return register(c);
    }

    /** A labelled gauge family; {@code values} reports every series on each scrape. */
    public AutoCloseable gauges(String name, String help, List<String> labelNames, Consumer<Samples> values) {
        GaugeWithCallback g = GaugeWithCallback.builder().name(name).help(help)
                .labelNames(labelNames.toArray(String[]::new))
                .callback(cb -> values.accept(cb::call))
                .build();
        return register(g);
    }

    public AutoCloseable register(Collector collector) {
        registry.register(Objects.requireNonNull(collector, "collector"));
        return () -> registry.unregister(collector);
    }

    public AutoCloseable register(MultiCollector collector) {
        registry.register(Objects.requireNonNull(collector, "collector"));
        return () -> registry.unregister(collector);
    }

    /** One scrape, rendered in the format the {@code Accept} header asks for (Prometheus text 0.0.4 by default). */
    public Scrape scrape(String acceptHeader) {
        ExpositionFormatWriter writer = FORMATS.findWriter(acceptHeader);
        ByteArrayOutputStream out = new ByteArrayOutputStream(16 * 1024);
        try {
            writer.write(out, registry.scrape(), EscapingScheme.UNDERSCORE_ESCAPING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Scrape(writer.getContentType(), out.toByteArray());
    }

    /** A rendered scrape and its {@code Content-Type}. */
    public record Scrape(String contentType, byte[] body) {
    }
}
