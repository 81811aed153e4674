package io.sluice.ingest;

import io.sluice.ingest.internal.IngestEngine;
import io.sluice.ingest.internal.OffsetRangeIngestor;
import io.sluice.ingest.internal.Supervision;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;

/**
 * A running ingest: a topic into a ClickHouse table with the configured strategy. One engine
 * ({@code internal.IngestEngine}: batch → insert → commit in order, supervised) reads the topic through
 * {@link io.sluice.core.Consumer} from the source the {@link ConsumerFactory} opens (the embedded broker, a remote
 * broker, or Kafka with {@code source=kafka}); the strategy decides what a batch becomes: one INSERT of an offset
 * range (offset-range), or writes to the strategy's {@link EventSink} (every other strategy).
 *
 * <pre>{@code
 * try (IngestPipeline p = IngestPipeline.start(config, broker::newConsumer)) { ... p.metrics() ... }
 * }</pre>
 */
public final class IngestPipeline implements AutoCloseable {
    private final IngestConfig config;
    private final IngestEngine<?> engine;

    private IngestPipeline(IngestConfig config, IngestEngine<?> engine) {
        this.config = config;
        this.engine = engine;
    }

    /**
     * Validates the table (creating it from {@code table.ddl} if given) and starts consuming. With
     * {@code source=kafka} the topic is read from Kafka ({@link KafkaSource}) and {@code consumers} is not used.
     * A topic that does not exist is a configuration error ({@link PipelineState#FAILED}).
     *
     * @throws io.sluice.core.SluiceException.InvalidConfigException if the topic is missing or the table is wrong
     */
    public static IngestPipeline start(IngestConfig config, ConsumerFactory consumers) {
        return start(config, consumers, false);
    }

    /**
     * As {@link #start(IngestConfig, ConsumerFactory)}; with {@code waitForTopic} a topic that does not exist yet is
     * waited for (as Kafka Connect does): the pipeline is {@link PipelineState#WAITING_FOR_TOPIC}, says so once in
     * the log, and starts consuming when the topic appears. For a standalone {@code sluice ingest}, whose topic
     * lives in another process.
     */
    public static IngestPipeline start(IngestConfig config, ConsumerFactory consumers, boolean waitForTopic) {
        if (config.topic() == null || config.topic().isBlank()) {
            throw io.sluice.core.SluiceException.InvalidConfigException.of("topic", config.topic(), "is required for an ingest pipeline");
        }
        if (config.source() == IngestConfig.Source.KAFKA) {
            consumers = KafkaSource.consumers(config.kafkaBootstrap());
        }
        Supervision.MissingTopic missingTopic = waitForTopic ? Supervision.MissingTopic.WAIT : Supervision.MissingTopic.FAIL;
        if (!config.strategy().hasEventSink()) {
            return new IngestPipeline(config, new IngestEngine<>(config, new OffsetRangeIngestor(config), consumers, missingTopic));
        }
        return new IngestPipeline(config, IngestEngine.feeding(EventSink.open(config), config, consumers, missingTopic));
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
        return engine.supervision().failure();
    }

    /** Where the pipeline is: running, retrying a transient failure, waiting for its topic, failed on a configuration error, closed. */
    public PipelineState state() {
        return engine.supervision().state();
    }

    /** Why the pipeline is {@link PipelineState#RETRYING}, {@link PipelineState#WAITING_FOR_TOPIC} or {@link PipelineState#FAILED}; null otherwise. */
    public String stateReason() {
        return engine.supervision().reason();
    }

    /** How many times the pipeline's loop started again after a transient failure. */
    public long restarts() {
        return engine.supervision().restarts();
    }

    /**
     * What the pipeline promises about its rows, detected at start from the server and the table (null until
     * ClickHouse answered). Strategies other than offset-range: {@code async} at-most-once; the stream strategies
     * exactly-once with entry columns; otherwise at-least-once (a timed-out INSERT is retried).
     */
    public Guarantee guarantee() {
        return engine.guarantee();
    }

    /** See {@link IngestMetrics#snapshot()}. */
    public Map<String, Number> metrics() {
        return engine.metrics();
    }

    /** Stops consuming, lands and commits what was taken (up to {@code close.timeout.ms}), closes the sink. Idempotent. */
    @Override
    public void close() {
        engine.close();
    }
}
