package io.sluice.core.internal;

import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.BrokerMetrics;
import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerGroups;
import io.sluice.core.ConsumerRunner;
import io.sluice.core.EventSubscriber;
import io.sluice.core.PartitionReader;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.RecordHandler;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.core.Subscription;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicDescription;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.bus.PartitionRing;
import io.sluice.core.internal.bus.StageAgents;
import io.sluice.core.internal.client.LocalConsumer;
import io.sluice.core.internal.client.LocalProducer;
import io.sluice.core.internal.client.PushConsumer;
import io.sluice.core.internal.group.GroupCoordinator;
import io.sluice.core.internal.journal.ChronicleSupport;
import io.sluice.core.internal.journal.ChronicleSwitches;
import io.sluice.core.internal.journal.JournalPretoucher;
import io.sluice.core.internal.journal.JournalProgress;
import io.sluice.core.internal.journal.JournalReader;
import io.sluice.records.CheckedBatch;
import org.HdrHistogram.Histogram;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * The embedded broker. Topic administration is synchronized (rare); the send path only reads the concurrent
 * topic map. A {@code .lock} file keeps a second process from opening the same data directory.
 */
public final class LocalBroker implements Broker, BrokerFront, LocalProducer.Rings, LocalConsumer.Journals {
    private static final Logger LOG = LoggerFactory.getLogger(LocalBroker.class);

    static {
        ChronicleSwitches.disableTelemetry();
    }

    private final BrokerConfig config;
    private final Path topicsDir;
    private final ConcurrentHashMap<String, Topic> topics = new ConcurrentHashMap<>();
    private final GroupCoordinator groups;
    /** The threads every partition's journal writer and live subscribers share. */
    private final StageAgents journalAgents;
    /** reads ahead of the journal writers (journal.pretouch.bytes), or null */
    private final JournalPretoucher pretoucher;
    private final StageAgents subscriberAgents;
    private final ScheduledExecutorService housekeeper;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final List<AutoCloseable> attached = new ArrayList<>();
    private final AtomicInteger consumerIds = new AtomicInteger();
    private final Histogram publishToJournal = new Histogram(3);
    private final Histogram journalToSubscriber = new Histogram(3);
    private volatile boolean closed;

    private LocalBroker(BrokerConfig config) {
        this.config = config;
        Path dataDir = config.dataDir();
        this.topicsDir = dataDir.resolve("topics");
        try {
            Files.createDirectories(topicsDir);
            lockChannel = FileChannel.open(dataDir.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            lock = tryLock(lockChannel);
        } catch (IOException e) {
            throw new SluiceException.JournalException("cannot open data directory " + dataDir + ": " + e, e);
        }
        if (lock == null) {
            closeQuietly(lockChannel);
            throw new SluiceException.InvalidConfigException("data directory " + dataDir + " is in use by another broker process");
        }
        this.journalAgents = new StageAgents("sluice-journal", config.journalThreads(), config.waitStrategy(),
                config.busBatchPauseNanos());
        // subscriber.threads = 0: live subscribers run on the journal threads (PartitionRing.subscribe)
        this.subscriberAgents = config.subscriberThreads() == 0 ? null
                : new StageAgents("sluice-subscriber", config.subscriberThreads(), config.waitStrategy(),
                config.busBatchPauseNanos());
        this.pretoucher = config.journalPretouchBytes() == 0 ? null
                : new JournalPretoucher(config.journalPretouchBytes(), "sluice-pretouch");
        try {
            loadTopics();
            this.groups = new GroupCoordinator(dataDir.resolve("groups"), this::partitionsOf, config.clock());
        } catch (RuntimeException e) {
            topics.values().forEach(Topic::close);
            if (subscriberAgents != null) {
                subscriberAgents.close();
            }
            journalAgents.close();
            if (pretoucher != null) {
                pretoucher.close();
            }
            releaseLock();
            throw e;
        }
        this.housekeeper = Executors.newSingleThreadScheduledExecutor(new NamedThreadFactory("sluice-housekeeper"));
        housekeeper.scheduleWithFixedDelay(this::applyRetention, config.retentionCheckMillis(), config.retentionCheckMillis(),
                TimeUnit.MILLISECONDS);
        LOG.info("broker open in {} with {} topics", dataDir, topics.size());
    }

    /** null when another process, or another broker in this JVM, holds the directory. */
    private static FileLock tryLock(FileChannel channel) throws IOException {
        try {
            return channel.tryLock();
        } catch (java.nio.channels.OverlappingFileLockException e) {
            return null;
        }
    }

    public static Broker open(BrokerConfig config) {
        io.sluice.core.internal.journal.JvmFlags.check();
        return new LocalBroker(config);
    }

    private void loadTopics() {
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(topicsDir)) {
            for (Path dir : dirs) {
                if (Files.isRegularFile(dir.resolve(Topic.CONFIG_FILE))) {
                    Topic t = Topic.load(dir, config, journalAgents, subscriberAgents, pretoucher);
                    topics.put(t.name(), t);
                }
            }
        } catch (IOException e) {
            throw new SluiceException.JournalException("cannot list topics in " + topicsDir + ": " + e, e);
        }
    }

    @Override
    public BrokerConfig config() {
        return config;
    }

    @Override
    public synchronized TopicDescription createTopic(TopicConfig topicConfig) {
        ensureOpen();
        if (topics.containsKey(topicConfig.name())) {
            throw new SluiceException.TopicExistsException("topic '" + topicConfig.name() + "' already exists");
        }
        Topic t = Topic.create(topicConfig, topicsDir.resolve(topicConfig.name()), config, journalAgents, subscriberAgents, pretoucher);
        topics.put(t.name(), t);
        LOG.info("created topic '{}' with {} partitions", t.name(), topicConfig.partitions());
        return t.describe();
    }

    @Override
    public synchronized TopicDescription createTopicIfAbsent(TopicConfig topicConfig) {
        Topic existing = topics.get(topicConfig.name());
        return existing != null ? existing.describe() : createTopic(topicConfig);
    }

    @Override
    public List<String> listTopics() {
        return new ArrayList<>(new TreeSet<>(topics.keySet()));
    }

    @Override
    public TopicDescription describeTopic(String topic) {
        return topic(topic).describe();
    }

    @Override
    public synchronized void deleteTopic(String topic) {
        ensureOpen();
        Topic t = topics.remove(topic);
        if (t == null) {
            throw SluiceException.UnknownTopicException.of(topic);
        }
        t.close();
        groups.topicDeleted(topic);
        try (Stream<Path> files = Files.walk(t.directory())) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new SluiceException.JournalException("cannot delete files of topic '" + topic + "': " + e, e);
        }
        LOG.info("deleted topic '{}'", topic);
    }

    @Override
    public synchronized TopicDescription alterTopic(String topic, long retentionMillis, long retentionBytes) {
        ensureOpen();
        Topic t = topic(topic);
        TopicConfig old = t.config();
        t.alter(new TopicConfig(old.name(), old.partitions(), retentionMillis, retentionBytes, old.journaled()));
        LOG.info("altered topic '{}': retention.ms {} -> {}, retention.bytes {} -> {}", topic, old.retentionMillis(),
                retentionMillis, old.retentionBytes(), retentionBytes);
        return t.describe();
    }

    @Override
    public long offsetForTimestamp(TopicPartition partition, long epochMillis) {
        try (JournalReader reader = openReader(partition)) {
            return reader.offsetForTimestamp(epochMillis);
        }
    }

    private Topic topic(String name) {
        Topic t = topics.get(name);
        if (t == null) {
            throw SluiceException.UnknownTopicException.of(name);
        }
        return t;
    }

    @Override
    public Producer newProducer(ProducerConfig producerConfig) {
        ensureOpen();
        return new LocalProducer(this, producerConfig);
    }

    @Override
    public long tryAppendBatch(TopicPartition partition, CheckedBatch batch, Acks acks, SendCallback callback) {
        if (closed) {
            return Producer.CLOSED;
        }
        LocalProducer.TopicRings rings = rings(partition.topic());
        int partitions = rings.partitions().length;
        if (partition.partition() < 0 || partition.partition() >= partitions) {
            throw SluiceException.InvalidConfigException.of("partition", partition.partition(),
                    "must be in [0, " + partitions + ") for topic '" + partition.topic() + "'");
        }
        if (acks != Acks.MEMORY && !rings.journaled()) {
            throw SluiceException.InvalidConfigException.of("acks", acks,
                    "must be MEMORY for memory-only topic '" + partition.topic() + "'");
        }
        return rings.partitions()[partition.partition()].tryPublishBatch(batch.buffer(), batch.offset(), batch.length(),
                batch.recordCount(), acks, callback, config.journalCallerAppends());
    }

    @Override
    public void sendJournalingHere(String topic, Runnable sends) {
        Topic t = closed || !config.journalCallerAppends() ? null : topics.get(topic);
        LocalProducer.TopicRings rings = t == null ? null : t.rings();
        if (rings == null || !rings.journaled() || rings.partitions().length > MAX_PARTITIONS_HELD) {
            sends.run();
            return;
        }
        PartitionRing[] partitions = rings.partitions();
        int held = 0; // a bit per partition taken (at most MAX_PARTITIONS_HELD)
        try {
            for (int p = 0; p < partitions.length; p++) {
                if (partitions[p].tryHoldJournal()) {
                    held |= 1 << p;
                }
            }
            sends.run();
        } finally {
            for (int p = 0; p < partitions.length; p++) {
                if ((held & (1 << p)) != 0) {
                    partitions[p].journalHeldAndRelease();
                }
            }
        }
    }

    @Override
    public Consumer newConsumer(ConsumerConfig consumerConfig) {
        ensureOpen();
        return new LocalConsumer(this, consumerConfig);
    }

    @Override
    public ConsumerRunner startConsumer(ConsumerConfig consumerConfig, String topic, RecordHandler handler) {
        ensureOpen();
        topic(topic);
        String name = consumerConfig.clientId() + "-" + consumerIds.incrementAndGet();
        PushConsumer runner = new PushConsumer(newConsumer(consumerConfig), topic, handler, consumerConfig.groupId() != null, name);
        synchronized (attached) {
            attached.add(runner);
        }
        return runner;
    }

    @Override
    public Subscription subscribe(String topic, String name, EventSubscriber subscriber) {
        ensureOpen();
        Topic t = topic(topic);
        List<PartitionRing.SubscriberStage> stages = new ArrayList<>();
        for (int p = 0; p < t.partitionCount(); p++) {
            stages.add(t.ring(p).subscribe(name, subscriber));
        }
        return new TopicSubscription(name, stages);
    }

    @Override
    public JournalReader openReader(TopicPartition partition) {
        ensureOpen();
        Topic t = topic(partition.topic());
        checkPartition(t, partition);
        return t.journal(partition.partition()).openReader();
    }

    private static void checkPartition(Topic t, TopicPartition tp) {
        if (tp.partition() >= t.partitionCount()) {
            throw SluiceException.UnknownTopicException.of(tp.toString());
        }
    }

    @Override
    public long startOffset(TopicPartition partition) {
        Topic t = topic(partition.topic());
        checkPartition(t, partition);
        return t.journal(partition.partition()).startOffset();
    }

    @Override
    public long endOffset(TopicPartition partition) {
        Topic t = topic(partition.topic());
        checkPartition(t, partition);
        return t.journal(partition.partition()).endOffset();
    }

    @Override
    public JournalProgress progress(TopicPartition partition) {
        Topic t = topic(partition.topic());
        checkPartition(t, partition);
        return t.journal(partition.partition()).progress();
    }

    @Override
    public void wakeOnRebalance(String groupId, Thread waiter) {
        groups.wakeOnRebalance(groupId, waiter);
    }

    @Override
    public void stopWakingOnRebalance(String groupId, Thread waiter) {
        groups.stopWakingOnRebalance(groupId, waiter);
    }

    @Override
    public Runnable onNextAppend(java.util.Collection<TopicPartition> partitions, Runnable wake) {
        java.util.List<JournalProgress> watched = new java.util.ArrayList<>(partitions.size());
        for (TopicPartition tp : partitions) {
            watched.add(progress(tp));
        }
        return new OneShotWake(watched, wake).register();
    }

    /** One wake-up for the first of several partitions to grow; the others are cancelled when it fires. */
    private static final class OneShotWake implements Runnable {
        private final java.util.List<JournalProgress> watched;
        private final Runnable wake;
        private final java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();

        OneShotWake(java.util.List<JournalProgress> watched, Runnable wake) {
            this.watched = watched;
            this.wake = wake;
        }

        Runnable register() {
            for (JournalProgress p : watched) {
                p.onNextSignal(this);
            }
            return this::cancel;
        }

        @Override
        public void run() {
            if (done.compareAndSet(false, true)) {
                cancelAll();
                wake.run();
            }
        }

        private void cancel() {
            if (done.compareAndSet(false, true)) {
                cancelAll();
            }
        }

        private void cancelAll() {
            for (JournalProgress p : watched) {
                p.cancel(this);
            }
        }
    }

    @Override
    public int partitionCount(String topic) {
        return topic(topic).partitionCount();
    }

    @Override
    public Set<TopicPartition> partitionsOf(String topic) {
        Topic t = topic(topic);
        Set<TopicPartition> out = new LinkedHashSet<>();
        for (int p = 0; p < t.partitionCount(); p++) {
            out.add(new TopicPartition(topic, p));
        }
        return out;
    }

    @Override
    public ConsumerGroups groups() {
        return groups;
    }

    @Override
    public io.sluice.core.ClassicGroups classicGroups() {
        return groups;
    }

    @Override
    public synchronized BrokerMetrics metrics() {
        List<BrokerMetrics.PartitionStats> stats = new ArrayList<>();
        for (String name : listTopics()) {
            Topic t = topics.get(name);
            if (t == null) {
                continue;
            }
            for (int p = 0; p < t.partitionCount(); p++) {
                PartitionRing ring = t.ring(p);
                ring.drainLatencies(publishToJournal, journalToSubscriber);
                var journal = ring.journal();
                stats.add(new BrokerMetrics.PartitionStats(name, p, ring.published(), ring.journaled(),
                        journal == null ? 0 : journal.appendedBytes(), ring.backPressured(), ring.capacity(),
                        ring.occupancy(), journal == null ? -1 : journal.startOffset(),
                        journal == null ? -1 : journal.endOffset(), ring.journalErrors()));
            }
        }
        return new BrokerMetrics(stats, publishToJournal.copy(), journalToSubscriber.copy());
    }

    // ----- LocalProducer.Rings -----

    @Override
    public LocalProducer.TopicRings rings(String topic) {
        return topic(topic).rings();
    }

    @Override
    public Iterable<LocalProducer.TopicRings> allRings() {
        return () -> topics.values().stream().map(Topic::rings).iterator();
    }

    @Override
    public int maxEventSize() {
        return config.maxEventSize();
    }

    @Override
    public long nowMillis() {
        return config.clock().epochMillis();
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    private void ensureOpen() {
        if (closed) {
            throw new SluiceException.ClosedException("broker is closed");
        }
    }

    /** Applies every topic's retention now (the housekeeper does this every retentionCheckMillis). */
    public void applyRetention() {
        long now = config.clock().epochMillis();
        for (Topic t : topics.values()) {
            try {
                t.applyRetention(now);
            } catch (RuntimeException e) {
                LOG.error("retention of topic '{}' failed", t.name(), e);
            }
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        List<AutoCloseable> toClose;
        synchronized (attached) {
            toClose = new ArrayList<>(attached);
        }
        toClose.forEach(LocalBroker::closeQuietly);
        housekeeper.shutdown();
        try {
            housekeeper.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        groups.close();
        topics.values().forEach(Topic::close);
        if (subscriberAgents != null) {
            subscriberAgents.close();
        }
        journalAgents.close();
        if (pretoucher != null) {
            pretoucher.close();
        }
        releaseLock();
        LOG.info("broker closed ({})", config.dataDir());
    }

    private void releaseLock() {
        try {
            lock.release();
        } catch (IOException e) {
            LOG.warn("cannot release data directory lock: {}", e.toString());
        }
        closeQuietly(lockChannel);
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.warn("close failed: {}", e.toString());
        }
    }
}
