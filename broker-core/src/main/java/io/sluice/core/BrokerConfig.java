package io.sluice.core;

import io.sluice.core.SluiceException.InvalidConfigException;

import java.nio.file.Path;
import java.util.Objects;

/**
 * The broker's settings, validated once by {@link Builder#build()}; every error names the setting and the value.
 *
 * @param dataDir                  where topics, journals and committed offsets live (created if missing)
 * @param ringSize                 slots per partition ring; a power of two in [64, 2^22]. Bounds the events in
 *                                 flight between producers and the journal writer of one partition
 * @param waitStrategy             how journal writers and subscribers wait for events
 * @param maxEventSize             the largest serialized event accepted (key + value + headers + 26 bytes framing)
 * @param rollCycle                journal file granularity (and so retention granularity)
 * @param retentionCheckMillis     how often the housekeeper applies topic retention
 * @param clock                    wall-clock time for timestamps, roll cycles and retention
 * @param minFreeDiskBytes         journals refuse appends (senders get a JournalException) while the disk holding
 *                                 them has less free space than this, instead of risking a SIGBUS on a memory-mapped
 *                                 write into a full disk; 0 disables the check
 */
public record BrokerConfig(Path dataDir, int ringSize, WaitStrategyType waitStrategy, int maxEventSize,
                           RollCycleType rollCycle, long retentionCheckMillis, EpochClock clock, long minFreeDiskBytes) {

    public static final int DEFAULT_RING_SIZE = 16_384;
    public static final int DEFAULT_MAX_EVENT_SIZE = 1 << 20;
    public static final int MAX_EVENT_SIZE_LIMIT = 64 << 20;
    public static final long DEFAULT_MIN_FREE_DISK_BYTES = 64L << 20;

    public BrokerConfig {
        Objects.requireNonNull(dataDir, "dataDir");
        Objects.requireNonNull(waitStrategy, "waitStrategy");
        Objects.requireNonNull(rollCycle, "rollCycle");
        Objects.requireNonNull(clock, "clock");
        if (ringSize < 64 || ringSize > (1 << 22) || Integer.bitCount(ringSize) != 1) {
            throw InvalidConfigException.of("ringSize", ringSize, "must be a power of two between 64 and 4194304");
        }
        if (maxEventSize < 64 || maxEventSize > MAX_EVENT_SIZE_LIMIT) {
            throw InvalidConfigException.of("maxEventSize", maxEventSize, "must be between 64 and " + MAX_EVENT_SIZE_LIMIT + " bytes");
        }
        if (minFreeDiskBytes < 0) {
            throw InvalidConfigException.of("minFreeDiskBytes", minFreeDiskBytes, "must be >= 0");
        }
        if (retentionCheckMillis < 1) {
            throw InvalidConfigException.of("retentionCheckMillis", retentionCheckMillis, "must be >= 1");
        }
    }

    public static Builder builder(Path dataDir) {
        return new Builder(dataDir);
    }

    public static final class Builder {
        private final Path dataDir;
        private int ringSize = DEFAULT_RING_SIZE;
        private WaitStrategyType waitStrategy = WaitStrategyType.SLEEPING;
        private int maxEventSize = DEFAULT_MAX_EVENT_SIZE;
        private RollCycleType rollCycle = RollCycleType.HOURLY;
        private long retentionCheckMillis = 60_000;
        private EpochClock clock = EpochClock.SYSTEM;
        private long minFreeDiskBytes = DEFAULT_MIN_FREE_DISK_BYTES;

        private Builder(Path dataDir) {
            this.dataDir = dataDir;
        }

        public Builder ringSize(int v) { this.ringSize = v; return this; }
        public Builder waitStrategy(WaitStrategyType v) { this.waitStrategy = v; return this; }
        public Builder maxEventSize(int v) { this.maxEventSize = v; return this; }
        public Builder rollCycle(RollCycleType v) { this.rollCycle = v; return this; }
        public Builder retentionCheckMillis(long v) { this.retentionCheckMillis = v; return this; }
        public Builder clock(EpochClock v) { this.clock = v; return this; }
        public Builder minFreeDiskBytes(long v) { this.minFreeDiskBytes = v; return this; }

        public BrokerConfig build() {
            if (dataDir == null) {
                throw InvalidConfigException.of("dataDir", null, "must be set");
            }
            return new BrokerConfig(dataDir, ringSize, waitStrategy, maxEventSize, rollCycle, retentionCheckMillis, clock, minFreeDiskBytes);
        }
    }
}
