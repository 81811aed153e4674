package io.sluice.net.http;

import io.sluice.net.metrics.MetricsRegistry;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * The earlier map-of-numbers registration, kept so components written against it still work: each name becomes
 * {@code sluice_<component>_<name>}, a counter if it ends in {@code _total}, else a gauge.
 *
 * @deprecated register typed series with their own help text through {@link MetricsRegistry#counter},
 * {@link MetricsRegistry#gauge} and their labelled forms.
 */
@Deprecated
public final class GaugeRegistry extends MetricsRegistry {
    private static final Pattern INVALID = Pattern.compile("[^A-Za-z0-9_]");
    private static final Pattern COMPONENT = Pattern.compile("[a-z][a-z0-9_]{0,63}");
    private final Map<String, List<AutoCloseable>> byComponent = new ConcurrentHashMap<>();

    /**
     * Registers (or replaces) the values of {@code component}; the names are read once, now, and the supplier on
     * every scrape.
     */
    public AutoCloseable register(String component, Supplier<? extends Map<String, ? extends Number>> values) {
        Objects.requireNonNull(values, "values");
        if (component == null || !COMPONENT.matcher(component).matches()) {
            throw new IllegalArgumentException("component must match [a-z][a-z0-9_]{0,63}, got '" + component + "'");
        }
        unregister(component);
        List<AutoCloseable> handles = new java.util.ArrayList<>();
        for (String name : values.get().keySet()) {
            String full = "sluice_" + component + "_" + INVALID.matcher(name).replaceAll("_");
            String help = "Sluice " + component + " " + name.replace('_', ' ') + ".";
            java.util.function.DoubleSupplier read = () -> {
                Number n = values.get().get(name);
                return n == null ? Double.NaN : n.doubleValue();
            };
            handles.add(full.endsWith("_total") ? counter(full, help, read) : gauge(full, help, read));
        }
        byComponent.put(component, handles);
        return () -> unregister(component);
    }

    private void unregister(String component) {
        List<AutoCloseable> old = byComponent.remove(component);
        if (old != null) {
            for (AutoCloseable h : old) {
                try {
                    h.close();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }
}
