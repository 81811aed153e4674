package io.sluice.ingest;

/**
 * Where an {@link IngestPipeline} is, exported by the broker as the gauge
 * {@code sluice_ingest_state{pipeline="<name>",state="<state>"} 1} and in {@code /health}.
 */
public enum PipelineState {
    /** Checking the table and the server (retried while ClickHouse is unreachable). */
    STARTING,
    /** Consuming and landing. */
    RUNNING,
    /**
     * The topic does not exist yet (a standalone {@code sluice ingest} started before the topic, as Kafka Connect
     * allows): the pipeline looks for it again after a backoff; {@code /health} stays healthy and says so.
     */
    WAITING_FOR_TOPIC,
    /** A transient failure (ClickHouse, Redis or the broker away, a timeout, schema drift) is being retried with backoff; nothing is lost meanwhile. */
    RETRYING,
    /** Stopped for good on a configuration error (or an error no retry can fix); {@code /health} answers 503 with the reason. */
    FAILED,
    /** Closed by its owner. */
    CLOSED
}
