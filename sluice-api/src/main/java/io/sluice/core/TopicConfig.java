package io.sluice.core;

import io.sluice.core.SluiceException.InvalidConfigException;

import java.util.regex.Pattern;

/**
 * A topic's settings, persisted in {@code <dataDir>/topics/<name>/topic.properties} and reloaded on open.
 *
 * @param name                       1–200 characters of {@code [A-Za-z0-9._-]}
 * @param partitions                 1–1024
 * @param retentionMillis            drop whole journal files whose events are all older than this; -1 keeps forever
 * @param retentionBytes             per partition, drop the oldest journal files while the total exceeds this; -1 for no limit
 * @param journaled                  false makes a memory-only topic: a pure in-process bus with live subscribers and
 *                                   no offsets, consumers or durability (acks above MEMORY are refused)
 */
public record TopicConfig(String name, int partitions, long retentionMillis, long retentionBytes, boolean journaled) {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,200}");
    public static final int MAX_PARTITIONS = 1024;

    public TopicConfig {
        if (name == null || !NAME.matcher(name).matches() || name.equals(".") || name.equals("..")) {
            throw InvalidConfigException.of("topic name", name, "must be 1-200 characters of [A-Za-z0-9._-]");
        }
        if (partitions < 1 || partitions > MAX_PARTITIONS) {
            throw InvalidConfigException.of("partitions", partitions, "must be between 1 and " + MAX_PARTITIONS);
        }
        if (retentionMillis < -1 || retentionMillis == 0) {
            throw InvalidConfigException.of("retentionMillis", retentionMillis, "must be > 0, or -1 for unlimited");
        }
        if (retentionBytes < -1 || retentionBytes == 0) {
            throw InvalidConfigException.of("retentionBytes", retentionBytes, "must be > 0, or -1 for unlimited");
        }
    }

    public static TopicConfig of(String name, int partitions) {
        return new TopicConfig(name, partitions, -1, -1, true);
    }

    public static Builder builder(String name) {
        return new Builder(name);
    }

    public static final class Builder {
        private final String name;
        private int partitions = 1;
        private long retentionMillis = -1;
        private long retentionBytes = -1;
        private boolean journaled = true;

        private Builder(String name) {
            this.name = name;
        }

        public Builder partitions(int v) { this.partitions = v; return this; }
        public Builder retentionMillis(long v) { this.retentionMillis = v; return this; }
        public Builder retentionBytes(long v) { this.retentionBytes = v; return this; }
        public Builder journaled(boolean v) { this.journaled = v; return this; }

        public TopicConfig build() {
            return new TopicConfig(name, partitions, retentionMillis, retentionBytes, journaled);
        }
    }
}
