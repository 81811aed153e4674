package io.sluice.ingest;

import io.sluice.core.SluiceException.InvalidConfigException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

/**
 * How events travel to ClickHouse. The names are the configuration values ({@code ingest.<name>.strategy}).
 * Every strategy but {@link #OFFSET_RANGE} is an {@link EventSink} fed by whoever writes events; offset-range has no
 * sink: it reads a Sluice topic itself, so only {@link IngestPipeline} runs it ({@link #hasEventSink()}).
 */
public enum Strategy {
    /** One INSERT per event; the caller waits for ClickHouse. The baseline. */
    SYNC("sync"),
    /** One INSERT per event without waiting for the data to be written: server-side async insert or a Buffer table. */
    ASYNC("async"),
    /** Client-side batches bounded by rows, bytes and linger; several INSERTs in flight. */
    COALESCING("coalescing"),
    /** Pipelined XADD to a Redis stream; one worker (the ingest engine over a group member) inserts batches and XACKs after ClickHouse accepted them. */
    REDIS_STREAM("redis-stream"),
    /** As {@link #REDIS_STREAM} with N drainers in one group, XAUTOCLAIM takeover and a dead-letter stream. */
    WORKER_POOL("worker-pool"),
    /**
     * A Sluice consumer group inserts batches that are offset ranges of a partition and commits after ClickHouse
     * accepted them. Was called {@code journal}, a name still accepted in configuration (deprecated).
     */
    OFFSET_RANGE("offset-range");

    /** The former configuration value of {@link #OFFSET_RANGE}, still accepted by {@link #parse}. */
    public static final String DEPRECATED_JOURNAL_NAME = "journal";

    private static final Logger LOG = LoggerFactory.getLogger(Strategy.class);
    /** The deprecation warning is logged once per JVM, not once per pipeline or per validation. */
    private static final AtomicBoolean WARNED_JOURNAL = new AtomicBoolean();

    private final String configName;

    Strategy(String configName) {
        this.configName = configName;
    }

    public String configName() {
        return configName;
    }

    public boolean usesRedis() {
        return this == REDIS_STREAM || this == WORKER_POOL;
    }

    /** False for {@link #OFFSET_RANGE}, which reads a topic itself and runs only inside an {@link IngestPipeline}. */
    public boolean hasEventSink() {
        return this != OFFSET_RANGE;
    }

    /** The configuration values, in declaration order (without the deprecated alias). */
    public static String[] configNames() {
        return Arrays.stream(values()).map(Strategy::configName).toArray(String[]::new);
    }

    /** Parses a configuration value ({@code journal} is read as {@link #OFFSET_RANGE}). */
    public static Strategy parse(String setting, String value) {
        String v = value.trim().toLowerCase(Locale.ROOT).replace('_', '-');
        if (v.equals(DEPRECATED_JOURNAL_NAME)) {
            if (WARNED_JOURNAL.compareAndSet(false, true)) {
                LOG.warn("{}={} is deprecated: the strategy is now called offset-range", setting, value);
            }
            return OFFSET_RANGE;
        }
        for (Strategy s : values()) {
            if (s.configName.equals(v)) {
                return s;
            }
        }
        throw InvalidConfigException.of(setting, "'" + value + "'", "must be one of "
                + Arrays.stream(values()).map(Strategy::configName).collect(Collectors.joining(", "))
                + " (" + DEPRECATED_JOURNAL_NAME + " is accepted as the former name of offset-range)");
    }
}
