package io.sluice.net.http;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * What other components of the process (the ingest pipelines) say about their health on {@code GET /health}:
 * the answer is {@code 503} when any of them is not healthy, with each component's status and reason in the body.
 * Suppliers are called on every request from an HTTP I/O thread: cheap, thread-safe, non-blocking. Thread-safe.
 *
 * <pre>{@code
 * health.register("ingest.orders", () -> new Health(p.state() != PipelineState.FAILED, Map.of("state", ...)));
 * }</pre>
 */
public final class HealthRegistry implements Supplier<Map<String, HealthRegistry.Health>> {
    private static final Logger LOG = LoggerFactory.getLogger(HealthRegistry.class);

    /**
     * @param healthy false turns {@code /health} into 503
     * @param details shown under the component's name (for example state, reason, guarantee)
     */
    public record Health(boolean healthy, Map<String, String> details) {
        public Health {
            details = Map.copyOf(details);
        }
    }

    private final Map<String, Supplier<Health>> sources = new ConcurrentHashMap<>();

    /** Registers (or replaces) a component; the handle's {@code close()} removes it. */
    public AutoCloseable register(String component, Supplier<Health> health) {
        Objects.requireNonNull(component, "component");
        Objects.requireNonNull(health, "health");
        sources.put(component, health);
        return () -> sources.remove(component, health);
    }

    /** Every component's health, sorted by name; a supplier that throws reports itself unhealthy. */
    @Override
    public Map<String, Health> get() {
        Map<String, Health> out = new TreeMap<>();
        sources.forEach((component, source) -> {
            try {
                out.put(component, Objects.requireNonNull(source.get(), "health"));
            } catch (RuntimeException e) {
                LOG.warn("health of component '{}' failed", component, e);
                out.put(component, new Health(false, Map.of("reason", "health check failed: " + e)));
            }
        });
        return out;
    }
}
