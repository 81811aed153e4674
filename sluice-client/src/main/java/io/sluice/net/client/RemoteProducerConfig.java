package io.sluice.net.client;

import io.sluice.core.ProducerConfig;
import io.sluice.core.SluiceException.InvalidConfigException;

import java.util.Objects;

/**
 * A {@link RemoteProducer}'s settings: where the broker is, the core {@link ProducerConfig} (acks, partitioner,
 * maxBlockMillis — the same object an embedded producer takes), and the client-side batching bounds.
 *
 * @param client              connection settings
 * @param producer            acks, partitioner and maxBlockMillis, as for an embedded producer
 * @param batchSizeBytes      a partition's batch is sent once it holds this many bytes (default 64 KiB)
 * @param lingerMicros        how long a batch that is not full may wait for more records (default 0: send as soon
 *                            as there is room in flight; batches still grow while requests are in flight)
 * @param bufferMemoryBytes   bytes of records held before {@code send} blocks (up to maxBlockMillis) (default 32 MiB)
 * @param maxInFlightRequests produce requests awaiting an answer on the connection (default 8)
 * @param maxRecordBytes      largest single record accepted by {@code send} (default 1 MiB; the broker's
 *                            maxEventSize still applies)
 */
public record RemoteProducerConfig(ClientConfig client, ProducerConfig producer, int batchSizeBytes, long lingerMicros,
                                   long bufferMemoryBytes, int maxInFlightRequests, int maxRecordBytes) {

    public RemoteProducerConfig {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(producer, "producer");
        if (batchSizeBytes < 1) {
            throw InvalidConfigException.of("batchSizeBytes", batchSizeBytes, "must be >= 1");
        }
        if (lingerMicros < 0) {
            throw InvalidConfigException.of("lingerMicros", lingerMicros, "must be >= 0");
        }
        if (maxRecordBytes < 64) {
            throw InvalidConfigException.of("maxRecordBytes", maxRecordBytes, "must be >= 64");
        }
        if (bufferMemoryBytes < maxRecordBytes) {
            throw InvalidConfigException.of("bufferMemoryBytes", bufferMemoryBytes, "must be >= maxRecordBytes (" + maxRecordBytes + ")");
        }
        if (maxInFlightRequests < 1 || maxInFlightRequests > 1024) {
            throw InvalidConfigException.of("maxInFlightRequests", maxInFlightRequests, "must be between 1 and 1024");
        }
        if ((long) batchSizeBytes + maxRecordBytes > client.maxFrameSize()) {
            throw InvalidConfigException.of("batchSizeBytes", batchSizeBytes, "plus maxRecordBytes must fit in maxFrameSize=" + client.maxFrameSize());
        }
    }

    public static Builder builder(ClientConfig client) {
        return new Builder(client);
    }

    public static final class Builder {
        private final ClientConfig client;
        private ProducerConfig producer = ProducerConfig.DEFAULT;
        private int batchSizeBytes = 64 << 10;
        private long lingerMicros = 0;
        private long bufferMemoryBytes = 32L << 20;
        private int maxInFlightRequests = 8;
        private int maxRecordBytes = 1 << 20;

        private Builder(ClientConfig client) {
            this.client = client;
        }

        public Builder producer(ProducerConfig v) { this.producer = v; return this; }
        public Builder batchSizeBytes(int v) { this.batchSizeBytes = v; return this; }
        public Builder lingerMicros(long v) { this.lingerMicros = v; return this; }
        public Builder bufferMemoryBytes(long v) { this.bufferMemoryBytes = v; return this; }
        public Builder maxInFlightRequests(int v) { this.maxInFlightRequests = v; return this; }
        public Builder maxRecordBytes(int v) { this.maxRecordBytes = v; return this; }

        public RemoteProducerConfig build() {
            return new RemoteProducerConfig(client, producer, batchSizeBytes, lingerMicros, bufferMemoryBytes,
                    maxInFlightRequests, maxRecordBytes);
        }
    }
}
