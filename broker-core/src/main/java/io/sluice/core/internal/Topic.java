package io.sluice.core.internal;

import io.sluice.core.BrokerConfig;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicDescription;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.bus.PartitionRing;
import io.sluice.core.internal.bus.StageAgents;
import io.sluice.core.internal.client.LocalProducer;
import io.sluice.core.internal.journal.DurableFiles;
import io.sluice.core.internal.journal.JournalPretoucher;
import io.sluice.core.internal.journal.PartitionJournal;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * A topic: its persisted config ({@code topic.properties}) and one ring (plus journal, unless memory-only) per
 * partition, in {@code <dataDir>/topics/<name>/<partition>/}.
 */
final class Topic implements AutoCloseable {
    static final String CONFIG_FILE = "topic.properties";

    /** Replaced by {@link #alter} (retention only), read by the housekeeper and describe: volatile. */
    private volatile TopicConfig config;
    private final Path dir;
    private final PartitionRing[] rings;
    private final LocalProducer.TopicRings producerView;

    private Topic(TopicConfig config, Path dir, BrokerConfig brokerConfig, StageAgents journalAgents, StageAgents subscriberAgents,
                  JournalPretoucher pretoucher) {
        this.config = config;
        this.dir = dir;
        this.rings = new PartitionRing[config.partitions()];
        try {
            for (int p = 0; p < rings.length; p++) {
                TopicPartition tp = new TopicPartition(config.name(), p);
                PartitionJournal journal = config.journaled()
                        ? new PartitionJournal(tp, dir.resolve(Integer.toString(p)), brokerConfig.rollCycle(), brokerConfig.clock(),
                                brokerConfig.minFreeDiskBytes(), brokerConfig.journalMapBytes())
                        : null;
                if (journal != null && pretoucher != null) {
                    journal.pretouchWith(pretoucher.register(tp.toString()));
                }
                rings[p] = new PartitionRing(tp, brokerConfig.ringSize(), journal, journalAgents, subscriberAgents);
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        this.producerView = new LocalProducer.TopicRings(config.name(), rings, config.journaled());
    }

    LocalProducer.TopicRings rings() {
        return producerView;
    }

    static Topic create(TopicConfig config, Path dir, BrokerConfig brokerConfig, StageAgents journalAgents,
                        StageAgents subscriberAgents, JournalPretoucher pretoucher) {
        writeConfig(config, dir);
        return new Topic(config, dir, brokerConfig, journalAgents, subscriberAgents, pretoucher);
    }

    /** Persists and applies a new config with the same name, partitions and journaled flag. */
    void alter(TopicConfig newConfig) {
        writeConfig(newConfig, dir);
        this.config = newConfig;
    }

    private static void writeConfig(TopicConfig config, Path dir) {
        try {
            Files.createDirectories(dir);
            Properties p = new Properties();
            p.setProperty("name", config.name());
            p.setProperty("partitions", Integer.toString(config.partitions()));
            p.setProperty("retention.ms", Long.toString(config.retentionMillis()));
            p.setProperty("retention.bytes", Long.toString(config.retentionBytes()));
            p.setProperty("journaled", Boolean.toString(config.journaled()));
            java.io.StringWriter w = new java.io.StringWriter();
            p.store(w, "Sluice topic");
            DurableFiles.replace(dir.resolve(CONFIG_FILE), w.toString().getBytes(StandardCharsets.UTF_8));
            DurableFiles.fsyncDirectory(dir.toAbsolutePath().getParent()); // the topic's directory entry itself
        } catch (IOException e) {
            throw new SluiceException.JournalException("cannot write topic config in " + dir + ": " + e, e);
        }
    }

    static Topic load(Path dir, BrokerConfig brokerConfig, StageAgents journalAgents, StageAgents subscriberAgents,
                      JournalPretoucher pretoucher) {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(dir.resolve(CONFIG_FILE), StandardCharsets.UTF_8)) {
            p.load(r);
        } catch (IOException e) {
            throw new SluiceException.JournalException("cannot read topic config in " + dir + ": " + e, e);
        }
        TopicConfig config = new TopicConfig(p.getProperty("name"), Integer.parseInt(p.getProperty("partitions")),
                Long.parseLong(p.getProperty("retention.ms", "-1")), Long.parseLong(p.getProperty("retention.bytes", "-1")),
                Boolean.parseBoolean(p.getProperty("journaled", "true")));
        return new Topic(config, dir, brokerConfig, journalAgents, subscriberAgents, pretoucher);
    }

    TopicConfig config() {
        return config;
    }

    String name() {
        return config.name();
    }

    int partitionCount() {
        return rings.length;
    }

    PartitionRing ring(int partition) {
        return rings[partition];
    }

    PartitionJournal journal(int partition) {
        PartitionJournal j = rings[partition].journal();
        if (j == null) {
            throw SluiceException.InvalidConfigException.of("topic '" + config.name() + "' journaled", false,
                    "must be true to read by offset (memory-only topics have live subscribers only)");
        }
        return j;
    }

    Path directory() {
        return dir;
    }

    TopicDescription describe() {
        List<TopicDescription.PartitionInfo> infos = new ArrayList<>(rings.length);
        for (int p = 0; p < rings.length; p++) {
            PartitionJournal j = rings[p].journal();
            infos.add(j == null
                    ? new TopicDescription.PartitionInfo(p, -1, -1, 0)
                    : new TopicDescription.PartitionInfo(p, j.startOffset(), j.endOffset(), j.journalBytes()));
        }
        return new TopicDescription(config, infos);
    }

    void applyRetention(long nowMillis) {
        TopicConfig config = this.config;
        if (!config.journaled() || (config.retentionMillis() < 0 && config.retentionBytes() < 0)) {
            return;
        }
        for (PartitionRing ring : rings) {
            ring.journal().applyRetention(nowMillis, config.retentionMillis(), config.retentionBytes());
        }
    }

    /** Drains and stops every partition ring, then closes the journals. */
    @Override
    public void close() {
        for (PartitionRing ring : rings) {
            if (ring != null) {
                ring.close();
            }
        }
        for (PartitionRing ring : rings) {
            if (ring != null && ring.journal() != null) {
                ring.journal().close();
            }
        }
    }
}
