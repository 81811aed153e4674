package io.sluice.net.http;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * Gauges that other components of the process (the binary broker server, a ClickHouse ingest) publish on
 * {@code GET /metrics}. Each component registers a supplier of name → value once; the supplier is called on every
 * scrape, from an HTTP I/O thread, so it must be cheap, thread-safe and non-blocking (read volatile counters).
 * Names are exposed as {@code sluice_<component>_<name>}, with characters outside {@code [A-Za-z0-9_]} replaced
 * by {@code _}. A name may end with Prometheus labels, {@code state{pipeline="orders",state="running"}}: they are
 * kept as given when well formed (names {@code [a-zA-Z_][a-zA-Z0-9_]*}, values without {@code "}, {@code \} or
 * newlines), otherwise the sample is dropped. Thread-safe.
 *
 * <pre>{@code
 * GaugeRegistry gauges = new GaugeRegistry();
 * gauges.register("binary", () -> Map.of("connections", server.connectionCount()));
 * new HttpApiServer(config, broker, gauges);   // exposes sluice_binary_connections
 * }</pre>
 */
public final class GaugeRegistry implements Supplier<Map<String, Number>> {
    private static final Logger LOG = LoggerFactory.getLogger(GaugeRegistry.class);
    private static final Pattern INVALID = Pattern.compile("[^A-Za-z0-9_]");
    private static final Pattern COMPONENT = Pattern.compile("[a-z][a-z0-9_]{0,63}");
    private static final Pattern LABELS = Pattern.compile(
            "\\{[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"\\\\\\n]*\"(,[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"\\\\\\n]*\")*}");

    private final Map<String, Supplier<? extends Map<String, ? extends Number>>> sources = new ConcurrentHashMap<>();

    /**
     * Registers (or replaces) the gauges of {@code component}.
     *
     * @param component lower-case name, {@code [a-z][a-z0-9_]*}, for example {@code "binary"} or {@code "clickhouse"}
     * @return a handle whose {@code close()} removes them
     */
    public AutoCloseable register(String component, Supplier<? extends Map<String, ? extends Number>> gauges) {
        Objects.requireNonNull(gauges, "gauges");
        if (component == null || !COMPONENT.matcher(component).matches()) {
            throw new IllegalArgumentException("component must match [a-z][a-z0-9_]{0,63}, got '" + component + "'");
        }
        sources.put(component, gauges);
        return () -> sources.remove(component, gauges);
    }

    /** The current values, sorted by exposed name. A supplier that throws is skipped for this scrape. */
    @Override
    public Map<String, Number> get() {
        Map<String, Number> out = new TreeMap<>();
        sources.forEach((component, source) -> {
            Map<String, ? extends Number> values;
            try {
                values = source.get();
            } catch (RuntimeException e) {
                LOG.warn("gauges of component '{}' failed; scraping without them this time", component, e);
                return;
            }
            if (values != null) {
                values.forEach((name, value) -> {
                    if (name != null && value != null) {
                        int brace = name.indexOf('{');
                        String base = brace < 0 ? name : name.substring(0, brace);
                        String labels = brace < 0 ? "" : name.substring(brace);
                        if (labels.isEmpty() || LABELS.matcher(labels).matches()) {
                            out.put("sluice_" + component + "_" + INVALID.matcher(base).replaceAll("_") + labels, value);
                        }
                    }
                });
            }
        });
        return out;
    }
}
