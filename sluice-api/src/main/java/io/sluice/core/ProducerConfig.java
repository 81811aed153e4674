package io.sluice.core;

import io.sluice.core.SluiceException.InvalidConfigException;

import java.util.Objects;

/**
 * @param acks           when a send is acknowledged (default {@link Acks#JOURNAL})
 * @param partitioner    how a partition is chosen when the record names none
 * @param maxBlockMillis how long {@link Producer#send} waits for room on a full ring before failing with
 *                       {@link SluiceException.BackPressureException}; 0 fails at once
 */
public record ProducerConfig(Acks acks, Partitioner partitioner, long maxBlockMillis) {

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
    }

    public static Builder builder() {
        return new Builder();
    }

    public static final class Builder {
        private Acks acks = Acks.JOURNAL;
        private Partitioner partitioner = Partitioner.KEY_HASH;
        private long maxBlockMillis = 10_000;

        public Builder acks(Acks v) { this.acks = v; return this; }
        public Builder partitioner(Partitioner v) { this.partitioner = v; return this; }
        public Builder maxBlockMillis(long v) { this.maxBlockMillis = v; return this; }

        public ProducerConfig build() {
            return new ProducerConfig(acks, partitioner, maxBlockMillis);
        }
    }
}
