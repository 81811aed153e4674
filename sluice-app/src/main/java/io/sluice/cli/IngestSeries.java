package io.sluice.cli;

import io.sluice.core.Broker;
import io.sluice.core.GroupAdmin;
import io.sluice.core.GroupStatus;
import io.sluice.core.SluiceException;
import io.sluice.ingest.IngestPipeline;
import io.sluice.net.metrics.MetricsRegistry;

import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The broker's ingest pipelines on {@code /metrics}, one series per pipeline ({@code pipeline="<name>"}): its state,
 * how many events of its topic it has not landed yet, rows landed, retries and dead letters. Read on each scrape.
 */
final class IngestSeries {
    private IngestSeries() {
    }

    /**
     * Events of the topic the pipeline has not landed in ClickHouse (nor dead-lettered): the lag of its consumer group
     * behind the topic's end plus what it holds in flight (read from the topic, not yet inserted).
     */
    static long behind(Broker broker, IngestPipeline p) {
        long groupLag;
        try {
            GroupStatus g = new GroupAdmin(broker).describe(p.config().group());
            groupLag = g.totalLag();
        } catch (SluiceException notYetCommitted) {
            groupLag = 0;
            for (var tp : broker.partitionsOf(p.config().topic())) {
                groupLag += broker.endOffset(tp) - broker.startOffset(tp);
            }
        }
        Number inFlight = p.metrics().get("lag");
        return groupLag + (inFlight == null ? 0 : inFlight.longValue());
    }

    static boolean up(IngestPipeline p) {
        return p.state() == io.sluice.ingest.PipelineState.RUNNING;
    }

    static void register(MetricsRegistry registry, Broker broker, List<IngestPipeline> pipelines) {
        List<String> labels = List.of("pipeline", "topic", "table", "strategy");
        registry.gauges("sluice_ingest_up", "1 while the ingest pipeline runs, 0 while it restarts or after it failed (sluice_ingest_state says which).",
                labels, s -> pipelines.forEach(p -> s.sample(up(p) ? 1 : 0, labelValues(p))));
        registry.gauges("sluice_ingest_behind_events", "Events of the topic not yet landed in ClickHouse nor dead-lettered.",
                labels, s -> pipelines.forEach(p -> {
                    try {
                        s.sample(behind(broker, p), labelValues(p));
                    } catch (SluiceException topicGone) {
                        // no such topic (a pipeline that failed on its configuration): no series, sluice_ingest_up says 0
                    }
                }));
        counter(registry, pipelines, "sluice_ingest_rows_total", "Rows the pipeline landed in ClickHouse.", "rows_inserted");
        counter(registry, pipelines, "sluice_ingest_retries_total", "ClickHouse inserts retried after a failure.", "retries");
        counter(registry, pipelines, "sluice_ingest_dead_letters_total", "Rows ClickHouse rejected, sent to the dead-letter table or stream.", "dead_lettered");
        counter(registry, pipelines, "sluice_ingest_batches_total", "Batches inserted into ClickHouse.", "batches");
    }

    private static void counter(MetricsRegistry registry, List<IngestPipeline> pipelines, String name, String help, String key) {
        ToDoubleFunction<Map<String, Number>> read = m -> m.get(key) == null ? 0 : m.get(key).doubleValue();
        registry.counters(name, help, List.of("pipeline"), s -> pipelines.forEach(p -> s.sample(read.applyAsDouble(p.metrics()), p.config().name())));
    }

    private static String[] labelValues(IngestPipeline p) {
        return new String[] {p.config().name(), p.config().topic(), p.config().table(), p.config().strategy().configName()};
    }
}
