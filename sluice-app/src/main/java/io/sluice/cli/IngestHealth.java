package io.sluice.cli;

import io.sluice.ingest.Guarantee;
import io.sluice.ingest.IngestPipeline;
import io.sluice.ingest.PipelineState;
import io.sluice.net.http.HealthRegistry;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How the broker shows its ingest pipelines: on {@code /health} (a pipeline that {@link PipelineState#FAILED} on a
 * configuration error makes it 503, with the reason) and on {@code /metrics} as labelled gauges:
 *
 * <pre>
 *   sluice_ingest_guarantee{pipeline="orders",guarantee="exactly-once-idempotent-insert"} 1
 *   sluice_ingest_state{pipeline="orders",state="running"} 1     (one sample per state: 1 for the current one, else 0)
 *   sluice_ingest_restarts{pipeline="orders"} 0
 * </pre>
 */
final class IngestHealth {
    private IngestHealth() {
    }

    static HealthRegistry.Health of(IngestPipeline p) {
        Map<String, String> details = new LinkedHashMap<>();
        PipelineState state = p.state();
        details.put("state", state.name().toLowerCase(Locale.ROOT));
        Guarantee g = p.guarantee();
        details.put("guarantee", g == null ? "unknown" : g.label());
        String reason = p.stateReason();
        if (reason != null) {
            details.put("reason", reason);
        }
        return new HealthRegistry.Health(state != PipelineState.FAILED, details);
    }

    static Map<String, Number> gauges(List<IngestPipeline> pipelines) {
        Map<String, Number> out = new LinkedHashMap<>();
        for (IngestPipeline p : pipelines) {
            String name = p.config().name();
            Guarantee g = p.guarantee();
            out.put("guarantee{pipeline=\"" + name + "\",guarantee=\"" + (g == null ? "unknown" : g.label()) + "\"}", 1);
            PipelineState current = p.state();
            for (PipelineState s : PipelineState.values()) {
                out.put("state{pipeline=\"" + name + "\",state=\"" + s.name().toLowerCase(Locale.ROOT) + "\"}", s == current ? 1 : 0);
            }
            out.put("restarts{pipeline=\"" + name + "\"}", p.restarts());
        }
        return out;
    }
}
