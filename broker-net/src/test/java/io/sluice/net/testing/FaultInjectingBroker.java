package io.sluice.net.testing;

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
import io.sluice.core.Subscription;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicDescription;
import io.sluice.core.TopicPartition;

import io.sluice.core.internal.BrokerFront;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;

/**
 * A real broker with a fault switch: every call goes to the real {@link Broker}, except that {@link #createTopic} and
 * {@link #openReader} throw what the test armed (an exception that is not a {@code SluiceException}, as a bug or an
 * unexpected library failure would), or {@code createTopic} waits on a latch (a slow disk). Tests use it to check that
 * an unexpected failure is answered and never wedges a connection, and where blocking calls run.
 */
public final class FaultInjectingBroker implements Broker, BrokerFront {
    private final Broker real;
    public volatile Supplier<? extends Throwable> createTopicFault;
    public volatile Supplier<? extends Throwable> openReaderFault;
    /** When set, createTopic waits for it (then creates the topic). */
    public volatile CountDownLatch createTopicGate;
    /** The thread that last ran createTopic. */
    public volatile String createTopicThread;

    public FaultInjectingBroker(Broker real) {
        this.real = real;
    }

    private static RuntimeException raise(Supplier<? extends Throwable> fault) {
        Throwable t = fault.get();
        if (t instanceof Error e) {
            throw e;
        }
        throw (RuntimeException) t;
    }

    @Override
    public BrokerConfig config() {
        return real.config();
    }

    @Override
    public TopicDescription createTopic(TopicConfig config) {
        createTopicThread = Thread.currentThread().getName();
        if (createTopicFault != null) {
            throw raise(createTopicFault);
        }
        CountDownLatch gate = createTopicGate;
        if (gate != null) {
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        return real.createTopic(config);
    }

    @Override
    public TopicDescription createTopicIfAbsent(TopicConfig config) {
        if (createTopicFault != null) {
            throw raise(createTopicFault);
        }
        return real.createTopicIfAbsent(config);
    }

    @Override
    public List<String> listTopics() {
        return real.listTopics();
    }

    @Override
    public TopicDescription describeTopic(String topic) {
        return real.describeTopic(topic);
    }

    @Override
    public void deleteTopic(String topic) {
        real.deleteTopic(topic);
    }

    @Override
    public TopicDescription alterTopic(String topic, long retentionMillis, long retentionBytes) {
        return real.alterTopic(topic, retentionMillis, retentionBytes);
    }

    @Override
    public long offsetForTimestamp(io.sluice.core.TopicPartition partition, long epochMillis) {
        return real.offsetForTimestamp(partition, epochMillis);
    }

    @Override
    public Producer newProducer(ProducerConfig config) {
        return real.newProducer(config);
    }

    @Override
    public long tryAppendBatch(TopicPartition partition, io.sluice.records.CheckedBatch batch,
                               io.sluice.core.Acks acks, io.sluice.core.SendCallback callback) {
        return BrokerFront.of(real).tryAppendBatch(partition, batch, acks, callback);
    }

    @Override
    public void sendJournalingHere(String topic, Runnable sends) {
        BrokerFront.of(real).sendJournalingHere(topic, sends);
    }

    @Override
    public Consumer newConsumer(ConsumerConfig config) {
        return real.newConsumer(config);
    }

    @Override
    public ConsumerRunner startConsumer(ConsumerConfig config, String topic, RecordHandler handler) {
        return real.startConsumer(config, topic, handler);
    }

    @Override
    public Subscription subscribe(String topic, String name, EventSubscriber subscriber) {
        return real.subscribe(topic, name, subscriber);
    }

    @Override
    public PartitionReader openReader(TopicPartition partition) {
        if (openReaderFault != null) {
            throw raise(openReaderFault);
        }
        return BrokerFront.of(real).openReader(partition);
    }

    @Override
    public long startOffset(TopicPartition partition) {
        return real.startOffset(partition);
    }

    @Override
    public long endOffset(TopicPartition partition) {
        return real.endOffset(partition);
    }

    @Override
    public Runnable onNextAppend(java.util.Collection<TopicPartition> partitions, Runnable wake) {
        return BrokerFront.of(real).onNextAppend(partitions, wake);
    }

    @Override
    public int partitionCount(String topic) {
        return real.partitionCount(topic);
    }

    @Override
    public Set<TopicPartition> partitionsOf(String topic) {
        return real.partitionsOf(topic);
    }

    @Override
    public ConsumerGroups groups() {
        return real.groups();
    }

    @Override
    public io.sluice.core.ClassicGroups classicGroups() {
        return real.classicGroups();
    }

    @Override
    public BrokerMetrics metrics() {
        return real.metrics();
    }

    @Override
    public boolean isClosed() {
        return real.isClosed();
    }

    @Override
    public void close() {
        real.close();
    }
}
