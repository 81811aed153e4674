package io.sluice.core;

import io.sluice.core.SluiceException.InvalidConfigException;

import java.util.Objects;

/**
 * @param acks           when a send is acknowledged (default {@link Acks#JOURNAL})
 * @param partitioner    how a partition is chosen when the record names none
 * @param maxBlockMillis how long {@link Producer#send} waits for room on a full ring before failing with
 *                       {@link SluiceException.BackPressureException}; 0 fails at once
 * @param lingerMicros   embedded producers ({@code Broker.newProducer}): how long a partition's record batch may wait
 *                       for more records. 0 (the default) publishes every record at once, one ring slot each; above 0
 *                       records are encoded into a per-partition record batch that crosses the ring as one slot and
 *                       is stored as one journal document, published when it reaches {@code batchSizeBytes}, when
 *                       it is {@code lingerMicros} old, or at {@link Producer#flush()} / close. (A network
 *                       {@code RemoteProducer} always batches; its bounds are in its own config.)
 * @param batchSizeBytes with {@code lingerMicros > 0}: a partition's batch is published once it holds this many
 *                       bytes (default 64 KiB)
 */
public record ProducerConfig(Acks acks, Partitioner partitioner, long maxBlockMillis, long lingerMicros, int batchSizeBytes) {

    /** Partition choice for records without an explicit partition. */
    public enum Partitioner {
        /** murmur2 hash of the key (as Kafka does), round-robin for records without a key. The default. */
        KEY_HASH,
        /** round-robin whatever the key. */
        ROUND_ROBIN
    }

    public static final ProducerConfig DEFAULT = builder().build();

    public ProducerConfig {
        Objects.requireNonNull(acks, "acks");
        Objects.requireNonNull(partitioner, "partitioner");
        if (maxBlockMillis < 0) {
            throw InvalidConfigException.of("maxBlockMillis", maxBlockMillis, "must be >= 0");
        }
        if (lingerMicros < 0 || lingerMicros > 60_000_000L) {
            throw InvalidConfigException.of("lingerMicros", lingerMicros, "must be between 0 and 60000000 (one minute)");
        }
        if (batchSizeBytes < 64 || batchSizeBytes > 16 << 20) {
            throw InvalidConfigException.of("batchSizeBytes", batchSizeBytes, "must be between 64 and 16777216");
        }
    }

    /** True if records are batched per partition before they cross the ring ({@code lingerMicros > 0}). */
    public boolean batching() {
        return lingerMicros > 0;
    }

    public static Builder builder() {
        return new Builder();
    }

    public static final class Builder {
        private Acks acks = Acks.JOURNAL;
        private Partitioner partitioner = Partitioner.KEY_HASH;
        private long maxBlockMillis = 10_000;
        private long lingerMicros = 0;
        private int batchSizeBytes = 64 << 10;

        public Builder acks(Acks v) { this.acks = v; return this; }
        public Builder partitioner(Partitioner v) { this.partitioner = v; return this; }
        public Builder maxBlockMillis(long v) { this.maxBlockMillis = v; return this; }
        public Builder lingerMicros(long v) { this.lingerMicros = v; return this; }
        public Builder batchSizeBytes(int v) { this.batchSizeBytes = v; return this; }

        public ProducerConfig build() {
            return new ProducerConfig(acks, partitioner, maxBlockMillis, lingerMicros, batchSizeBytes);
        }
    }
}
