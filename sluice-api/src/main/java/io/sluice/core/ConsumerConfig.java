package io.sluice.core;

import io.sluice.core.SluiceException.InvalidConfigException;

import java.util.Objects;

/**
 * @param groupId              consumer group, or null for a consumer that only uses {@link Consumer#assign}
 * @param clientId             a readable name, used in thread names and member ids
 * @param offsetReset          where to start without a committed offset (default {@link OffsetReset#LATEST}, as Kafka)
 * @param maxPollRecords       the most records one poll returns (1–100000)
 * @param maxPollBytes         the most value+key bytes one poll returns (at least one record is always returned)
 * @param sessionTimeoutMillis a group member that has not polled for this long is removed and its partitions reassigned
 */
public record ConsumerConfig(String groupId, String clientId, OffsetReset offsetReset, int maxPollRecords,
                             int maxPollBytes, long sessionTimeoutMillis) {

    public ConsumerConfig {
        Objects.requireNonNull(offsetReset, "offsetReset");
        Objects.requireNonNull(clientId, "clientId");
        if (groupId != null && groupId.isBlank()) {
            throw InvalidConfigException.of("groupId", "'" + groupId + "'", "must not be blank");
        }
        if (maxPollRecords < 1 || maxPollRecords > 100_000) {
            throw InvalidConfigException.of("maxPollRecords", maxPollRecords, "must be between 1 and 100000");
        }
        if (maxPollBytes < 1) {
            throw InvalidConfigException.of("maxPollBytes", maxPollBytes, "must be >= 1");
        }
        if (sessionTimeoutMillis < 10) {
            throw InvalidConfigException.of("sessionTimeoutMillis", sessionTimeoutMillis, "must be >= 10");
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    public static final class Builder {
        private String groupId;
        private String clientId = "consumer";
        private OffsetReset offsetReset = OffsetReset.LATEST;
        private int maxPollRecords = 500;
        private int maxPollBytes = 8 << 20;
        private long sessionTimeoutMillis = 10_000;

        public Builder groupId(String v) { this.groupId = v; return this; }
        public Builder clientId(String v) { this.clientId = v; return this; }
        public Builder offsetReset(OffsetReset v) { this.offsetReset = v; return this; }
        public Builder maxPollRecords(int v) { this.maxPollRecords = v; return this; }
        public Builder maxPollBytes(int v) { this.maxPollBytes = v; return this; }
        public Builder sessionTimeoutMillis(long v) { this.sessionTimeoutMillis = v; return this; }

        public ConsumerConfig build() {
            return new ConsumerConfig(groupId, clientId, offsetReset, maxPollRecords, maxPollBytes, sessionTimeoutMillis);
        }
    }
}
