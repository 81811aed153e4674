package io.sluice.ingest;

import io.sluice.ingest.internal.OffsetRangeIngestor;
import io.sluice.ingest.internal.TopicIngestor;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;

/**
 * A running ingest: a Sluice topic into a ClickHouse table with the configured strategy. The offset-range strategy
 * inserts straight from the topic's consumer group; the others feed their {@link EventSink} from it.
 *
 * <pre>{@code
 * try (IngestPipeline p = IngestPipeline.start(config, broker::newConsumer)) { ... p.metrics() ... }
 * }</pre>
 */
public final class IngestPipeline implements AutoCloseable {
    private final IngestConfig config;
    private final OffsetRangeIngestor offsetRange;
    private final EventSink sink;
    private final TopicIngestor feeder;

    private IngestPipeline(IngestConfig config, OffsetRangeIngestor offsetRange, EventSink sink, TopicIngestor feeder) {
        this.config = config;
        this.offsetRange = offsetRange;
        this.sink = sink;
        this.feeder = feeder;
    }

    /**
     * Validates the table (creating it from {@code table.ddl} if given) and starts consuming. With
     * {@code source=kafka} the topic is read from Kafka ({@link KafkaSource}) and {@code consumers} is not used.
     *
     * @throws io.sluice.core.SluiceException.InvalidConfigException if the topic is missing or the table is wrong
     */
    public static IngestPipeline start(IngestConfig config, ConsumerFactory consumers) {
        if (config.topic() == null || config.topic().isBlank()) {
            throw io.sluice.core.SluiceException.InvalidConfigException.of("topic", config.topic(), "is required for an ingest pipeline");
        }
        if (config.source() == IngestConfig.Source.KAFKA) {
            consumers = KafkaSource.consumers(config.kafkaBootstrap());
        }
                if (!config.strategy().hasEventSink()) {
            return new IngestPipeline(config, new OffsetRangeIngestor(config, consumers), null, null);
        }
        EventSink sink = EventSink.open(config);
        return new IngestPipeline(config, null, sink, new TopicIngestor(config, sink, consumers));
    }

    /** The names {@code <name>} of every {@code ingest.<name>.*} section in a broker config file. */
    public static List<String> sectionNames(Properties props, String prefix) {
        TreeSet<String> names = new TreeSet<>();
        for (String key : props.stringPropertyNames()) {
            if (key.startsWith(prefix)) {
                String rest = key.substring(prefix.length());
                int dot = rest.indexOf('.');
                if (dot > 0) {
                    names.add(rest.substring(0, dot));
                }
            }
        }
        return new ArrayList<>(names);
    }

    /** Every pipeline configured in {@code props} under {@code ingest.<name>.}. */
    public static List<IngestConfig> configsFromProperties(Properties props) {
        List<IngestConfig> out = new ArrayList<>();
        for (String name : sectionNames(props, "ingest.")) {
            out.add(IngestConfig.fromProperties(props, "ingest." + name + "."));
        }
        return out;
    }

    public IngestConfig config() {
        return config;
    }

    /** The error that stopped the pipeline for good (a configuration error), or null. */
    public Throwable failure() {
        return offsetRange != null ? offsetRange.failure() : feeder.supervision().failure();
    }

    /** Where the pipeline is: running, retrying a transient failure, failed on a configuration error, closed. */
    public PipelineState state() {
        return offsetRange != null ? offsetRange.supervision().state() : feeder.supervision().state();
    }

    /** Why the pipeline is {@link PipelineState#RETRYING} or {@link PipelineState#FAILED}; null otherwise. */
    public String stateReason() {
        return offsetRange != null ? offsetRange.supervision().reason() : feeder.supervision().reason();
    }

    /** How many times the pipeline's loop started again after a transient failure. */
    public long restarts() {
        return offsetRange != null ? offsetRange.supervision().restarts() : feeder.supervision().restarts();
    }

    /**
     * What the pipeline promises about its rows, detected at start from the server and the table (null until
     * ClickHouse answered). Strategies other than offset-range: {@code async} at-most-once; the stream strategies
     * exactly-once with entry columns; otherwise at-least-once (a timed-out INSERT is retried).
     */
    public Guarantee guarantee() {
        return offsetRange != null ? offsetRange.guarantee() : sink.guarantee();
    }

    /** See {@link IngestMetrics#snapshot()}. */
    public Map<String, Number> metrics() {
        return offsetRange != null ? offsetRange.metrics().snapshot() : sink.metrics();
    }

    @Override
    public void close() {
        if (offsetRange != null) {
            offsetRange.close();
        } else {
            feeder.close();
            sink.close();
        }
    }
}
