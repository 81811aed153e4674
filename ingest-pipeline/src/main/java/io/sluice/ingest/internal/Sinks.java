package io.sluice.ingest.internal;

import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.ingest.EventSink;
import io.sluice.ingest.IngestConfig;

/** Builds the {@link EventSink} of a configured strategy. */
public final class Sinks {
    private Sinks() {
    }

    public static EventSink open(IngestConfig config) {
        SinkContext ctx = new SinkContext(config, config.strategy().usesRedis() ? RowFormat.Provenance.ENTRIES : RowFormat.Provenance.NONE);
        return switch (config.strategy()) {
            case SYNC -> new SyncSink(ctx);
            case ASYNC -> new AsyncSink(ctx);
            case COALESCING -> new CoalescingSink(ctx);
            case REDIS_STREAM -> new RedisStreamSink(ctx, 1, true);
            case WORKER_POOL -> new RedisStreamSink(ctx, config.workers(), true);
            case OFFSET_RANGE -> throw InvalidConfigException.of("strategy", "offset-range",
                    "has no EventSink: the offset-range strategy reads a Sluice topic (use IngestPipeline)");
        };
    }
}
