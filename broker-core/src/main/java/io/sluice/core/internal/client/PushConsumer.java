package io.sluice.core.internal.client;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.ConsumerRunner;
import io.sluice.core.RecordHandler;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.NamedThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs poll → handler → commit on one named thread. A batch the handler rejects (throws) is not committed and the
 * consumer seeks back to its first offsets, so it is delivered again after a backoff: at-least-once.
 */
public final class PushConsumer implements ConsumerRunner, Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(PushConsumer.class);

    private final Consumer consumer;
    private final String topic;
    private final RecordHandler handler;
    private final boolean commit;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long delivered;
    private volatile long failures;

    public PushConsumer(Consumer consumer, String topic, RecordHandler handler, boolean commit, String name) {
        this.consumer = consumer;
        this.topic = topic;
        this.handler = handler;
        this.commit = commit;
        this.thread = new NamedThreadFactory("sluice-consumer-" + name).newThread(this);
        this.thread.start();
    }

    @Override
    public void run() {
        try {
            consumer.subscribe(topic);
            long backoff = 1_000_000;
            while (running) {
                List<ConsumerRecord> batch = consumer.poll(Duration.ofMillis(100));
                if (batch.isEmpty()) {
                    continue;
                }
                try {
                    handler.onRecords(batch);
                    delivered += batch.size();
                    if (commit) {
                        commit();
                    }
                    backoff = 1_000_000;
                } catch (Exception e) {
                    failures++;
                    LOG.warn("handler failed on {} records of '{}' (failure {}); redelivering", batch.size(), topic, failures, e);
                    rewind(batch);
                    LockSupport.parkNanos(backoff);
                    backoff = Math.min(backoff * 2, TimeUnit.SECONDS.toNanos(1));
                }
            }
        } catch (SluiceException.ClosedException e) {
            LOG.debug("push consumer of '{}' stops: {}", topic, e.getMessage());
        } catch (RuntimeException e) {
            LOG.error("push consumer of '{}' stopped on an unexpected error", topic, e);
        } finally {
            consumer.close();
        }
    }

    /** A refused commit (a newer generation owns the partitions) is not the handler's failure: the new owner redelivers. */
    private void commit() {
        try {
            consumer.commitSync();
        } catch (SluiceException.GroupException e) {
            LOG.info("commit of '{}' refused ({}); the partitions' next owner delivers those records again", topic, e.getMessage());
        }
    }

    private void rewind(List<ConsumerRecord> batch) {
        Map<TopicPartition, Long> first = new HashMap<>();
        for (ConsumerRecord r : batch) {
            first.merge(r.topicPartition(), r.offset(), Math::min);
        }
        Set<TopicPartition> assigned = consumer.assignment();
        first.forEach((tp, offset) -> {
            if (assigned.contains(tp)) {
                consumer.seek(tp, offset);
            }
        });
    }

    @Override
    public long delivered() {
        return delivered;
    }

    @Override
    public long failures() {
        return failures;
    }

    @Override
    public void close() {
        running = false;
        if (Thread.currentThread() != thread) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
