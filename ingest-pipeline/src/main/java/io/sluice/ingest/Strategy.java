package io.sluice.ingest;

import io.sluice.core.SluiceException.InvalidConfigException;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** How events travel to ClickHouse. The names are the configuration values ({@code ingest.<name>.strategy}). */
public enum Strategy {
    /** One INSERT per event; the caller waits for ClickHouse. The baseline. */
    SYNC("sync"),
    /** One INSERT per event without waiting for the data to be written: server-side async insert or a Buffer table. */
    ASYNC("async"),
    /** Client-side batches bounded by rows, bytes and linger; several INSERTs in flight. */
    COALESCING("coalescing"),
    /** Pipelined XADD to a Redis stream; one drainer inserts batches and XACKs after ClickHouse accepted them. */
    REDIS_STREAM("redis-stream"),
    /** As {@link #REDIS_STREAM} with N drainers in one group, XAUTOCLAIM takeover and a dead-letter stream. */
    WORKER_POOL("worker-pool"),
    /** A Sluice consumer group inserts offset-range batches and commits after ClickHouse accepted them. */
    JOURNAL("journal");

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

    public static Strategy parse(String setting, String value) {
        String v = value.trim().toLowerCase(Locale.ROOT).replace('_', '-');
        for (Strategy s : values()) {
            if (s.configName.equals(v)) {
                return s;
            }
        }
        throw InvalidConfigException.of(setting, "'" + value + "'", "must be one of "
                + Arrays.stream(values()).map(Strategy::configName).collect(Collectors.joining(", ")));
    }
}
