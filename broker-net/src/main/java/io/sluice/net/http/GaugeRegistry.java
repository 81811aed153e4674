package io.sluice.net.http;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.sluice.net.metrics.MetricsRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Map-of-numbers registration for components that publish a {@code name → value} map: each name becomes
 * {@code sluice_<component>_<name>} (characters outside {@code [A-Za-z0-9_]} replaced by {@code _}), a counter if it
 * ends in {@code _total}, else a gauge. A name may end with Prometheus labels,
 * {@code state{pipeline="orders",state="running"}}: they are kept when well formed (names
 * {@code [a-zA-Z_][a-zA-Z0-9_]*}, values without {@code "}, {@code \} or newlines), otherwise the sample is dropped.
 * Suppliers are called on every scrape from an HTTP I/O thread (cheap, non-blocking); one that throws is skipped for
 * that scrape. Thread-safe. New code registers typed series with their own help through {@link MetricsRegistry}.
 */
public final class GaugeRegistry extends MetricsRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(GaugeRegistry.class);
    private static final Pattern INVALID = Pattern.compile("[^A-Za-z0-9_]");
    private static final Pattern COMPONENT = Pattern.compile("[a-z][a-z0-9_]{0,63}");
    private static final Pattern LABELS = Pattern.compile(
            "\\{[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"\\\\\\n]*\"(,[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"\\\\\\n]*\")*}");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"([^\"\\\\\\n]*)\"");

    private final Map<String, Supplier<? extends Map<String, ? extends Number>>> sources = new ConcurrentHashMap<>();

    public GaugeRegistry() {
        register((MultiCollector) this::collect);
    }

    /**
     * Registers (or replaces) the values of {@code component}.
     *
     * @param component lower-case name, {@code [a-z][a-z0-9_]*}, for example {@code "binary"} or {@code "ingest"}
     * @return a handle whose {@code close()} removes them
     */
    public AutoCloseable register(String component, Supplier<? extends Map<String, ? extends Number>> values) {
        Objects.requireNonNull(values, "values");
        if (component == null || !COMPONENT.matcher(component).matches()) {
            throw new IllegalArgumentException("component must match [a-z][a-z0-9_]{0,63}, got '" + component + "'");
        }
        sources.put(component, values);
        return () -> sources.remove(component, values);
    }

    private MetricSnapshots collect() {
        // full name → (labels → value), sorted for a stable exposition
        Map<String, Map<Labels, Double>> families = new TreeMap<>();
        sources.forEach((component, source) -> {
            Map<String, ? extends Number> values;
            try {
                values = source.get();
            } catch (RuntimeException e) {
                LOG.warn("metrics of component '{}' failed; scraping without them this time", component, e);
                return;
            }
            if (values == null) {
                return;
            }
            values.forEach((name, value) -> {
                if (name == null || value == null) {
                    return;
                }
                int brace = name.indexOf('{');
                String base = brace < 0 ? name : name.substring(0, brace);
                String labelText = brace < 0 ? "" : name.substring(brace);
                if (!labelText.isEmpty() && !LABELS.matcher(labelText).matches()) {
                    return;
                }
                Labels labels = Labels.EMPTY;
                Matcher m = LABEL.matcher(labelText);
                while (m.find()) {
                    labels = labels.add(m.group(1), m.group(2));
                }
                families.computeIfAbsent("sluice_" + component + "_" + INVALID.matcher(base).replaceAll("_"), k -> new java.util.LinkedHashMap<>())
                        .put(labels, value.doubleValue());
            });
        });
        List<MetricSnapshot> out = new ArrayList<>();
        families.forEach((name, samples) -> {
            if (name.endsWith("_total")) {
                CounterSnapshot.Builder b = CounterSnapshot.builder().name(name.substring(0, name.length() - "_total".length()))
                        .help("Sluice " + name.substring("sluice_".length()).replace('_', ' ') + ".");
                samples.forEach((labels, v) -> b.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(labels).value(v).build()));
                out.add(b.build());
            } else {
                GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name)
                        .help("Sluice " + name.substring("sluice_".length()).replace('_', ' ') + ".");
                samples.forEach((labels, v) -> b.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(labels).value(v).build()));
                out.add(b.build());
            }
        });
        return new MetricSnapshots(out);
    }
}
