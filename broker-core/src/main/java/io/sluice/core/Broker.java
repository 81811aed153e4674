package io.sluice.core;

import java.util.List;
import java.util.Set;

/**
 * The embeddable broker: topics of partitions, each partition a Disruptor ring feeding one journal writer
 * (Chronicle Queue) and then live subscribers. Thread-safe. Open one per data directory.
 *
 * <pre>{@code
 * try (Broker broker = Broker.open(BrokerConfig.builder(Path.of("data")).build())) {
 *     broker.createTopicIfAbsent(TopicConfig.of("orders", 4));
 *     try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
 *         RecordMetadata md = producer.send(ProducerRecord.of("orders", "k", "v")).join();
 *     }
 * }
 * }</pre>
 *
 * <p>{@link #close()} stops accepting sends, drains every accepted event to the journal, completes its callback,
 * and stops all threads. Reopening the same directory after a clean close or a crash recovers every event that
 * was acknowledged with {@link Acks#JOURNAL} or stronger, and every committed offset.
 *
 * <p>What a network front needs beyond this (appending a producer's batch as it came, copying stored batches, being
 * woken by appends) is not API: {@code io.sluice.core.internal.BrokerFront.of(broker)}.
 */
public interface Broker extends AutoCloseable {

    /**
     * Opens (or creates) the broker in {@link BrokerConfig#dataDir()}, recovering its topics and offsets.
     *
     * @throws SluiceException.InvalidConfigException at once, listing them, when the JVM was started without the
     *         {@code --add-exports}/{@code --add-opens} flags Chronicle Queue needs ({@code java @sluice.jvmopts ...})
     */
    static Broker open(BrokerConfig config) {
        return io.sluice.core.internal.LocalBroker.open(config);
    }

    BrokerConfig config();

    /** @throws SluiceException.TopicExistsException if it exists */
    TopicDescription createTopic(TopicConfig config);

    /** Creates the topic unless it exists; returns the existing or new topic's description. */
    TopicDescription createTopicIfAbsent(TopicConfig config);

    /** Topic names, sorted. */
    List<String> listTopics();

    /** @throws SluiceException.UnknownTopicException if it does not exist */
    TopicDescription describeTopic(String topic);

    /** Deletes a topic and its journal files. */
    void deleteTopic(String topic);

    /**
     * Changes a topic's retention (persisted; applied from the next retention run). Partitions and the journaled flag
     * cannot change.
     *
     * @param retentionMillis -1 keeps events forever
     * @param retentionBytes  per partition, -1 for no limit
     * @throws SluiceException.UnknownTopicException  if it does not exist
     * @throws SluiceException.InvalidConfigException for an invalid value
     */
    TopicDescription alterTopic(String topic, long retentionMillis, long retentionBytes);

    /** The first offset of the partition whose event timestamp is at or after {@code epochMillis}; the end offset if none. */
    long offsetForTimestamp(TopicPartition partition, long epochMillis);

    Producer newProducer(ProducerConfig config);

    Consumer newConsumer(ConsumerConfig config);

    /**
     * Starts a push consumer on its own named thread: it subscribes to {@code topic} (a group when the config has a
     * groupId, otherwise all partitions), polls, hands batches to {@code handler}, and commits after each batch the
     * handler accepted.
     */
    ConsumerRunner startConsumer(ConsumerConfig config, String topic, RecordHandler handler);

    /** Adds a live subscriber to every partition ring of the topic, after the journal writer. */
    Subscription subscribe(String topic, String name, EventSubscriber subscriber);

    /**
     * Opens a cursor over one partition's journal, positioned at its start offset, for a reader that keeps its own
     * position (a replay, an export, a check): {@link PartitionReader#readViews} reads it allocating nothing per record.
     * Single-threaded; close it when done.
     *
     * @throws SluiceException.UnknownTopicException for an unknown topic or partition
     * @throws SluiceException.InvalidConfigException for a memory-only topic (it has no journal to read)
     */
    PartitionReader openReader(TopicPartition partition);

    /** The first retained offset of a partition. */
    long startOffset(TopicPartition partition);

    /** The offset the next event of a partition will get (cheap: a volatile read). */
    long endOffset(TopicPartition partition);

    /** All partitions of a topic. */
    Set<TopicPartition> partitionsOf(String topic);

    /**
     * The number of partitions of a topic: a map lookup, for per-request checks.
     *
     * @throws SluiceException.UnknownTopicException if the topic does not exist
     */
    int partitionCount(String topic);

    ConsumerGroups groups();

    /**
     * The same groups for clients that assign partitions themselves (Kafka's classic group protocol): what a Kafka
     * listener maps JoinGroup, SyncGroup, Heartbeat, LeaveGroup and the offset APIs onto.
     */
    ClassicGroups classicGroups();

    BrokerMetrics metrics();

    boolean isClosed();

    @Override
    void close();
}
