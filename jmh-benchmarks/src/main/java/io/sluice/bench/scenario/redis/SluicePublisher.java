package io.sluice.bench.scenario.redis;

import io.lettuce.core.RedisClient;
import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SendCallback;
import io.sluice.core.Subscription;
import io.sluice.core.TopicConfig;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Sluice's path: the application publishes to a journaled Sluice topic (acks=JOURNAL), and a live subscriber —
 * after the journal in the Disruptor graph — pipelines each event to the Redis stream, flushing at the end of each
 * Disruptor batch (smart batching: one flush per burst, one per event when idle). The subscriber's XADD window is
 * bounded, and a {@link LagGuard} keeps it from outrunning the consumer group past MAXLEN, so a slow Redis or slow
 * consumers back-pressure the ring and then the producer instead of losing trimmed entries.
 */
final class SluicePublisher implements Publisher {
    private final Producer producer;
    private final Subscription subscription;
    private final PipelinedXadd xadd;
    private final String topic;
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong forwarded = new AtomicLong();
    private final SendCallback callback = (partition, offset, error) -> {
        if (error != null) {
            failed.incrementAndGet();
        }
    };
    private long published;

    SluicePublisher(Broker broker, RedisClient client, String topic) {
        this.topic = topic;
        broker.createTopicIfAbsent(TopicConfig.builder(topic).partitions(1).build());
        this.xadd = new PipelinedXadd(client, new LagGuard(client, StreamReaders.GROUP_NAME));
        this.subscription = broker.subscribe(topic, "redis-stream-writer", (event, endOfBatch) -> {
            xadd.xadd(Arrays.copyOf(event.valueBuffer(), event.valueLength()));
            if (endOfBatch) {
                xadd.flush();
            }
            forwarded.incrementAndGet();
        });
        this.producer = broker.newProducer(ProducerConfig.builder().acks(Acks.JOURNAL).build());
    }

    @Override
    public void target(byte[] stream) {
        xadd.target(stream);
    }

    @Override
    public void publish(byte[] envelope) {
        ProducerRecord record = ProducerRecord.of(topic, envelope);
        long r;
        while ((r = producer.trySend(record, callback)) == Producer.BACK_PRESSURED) {
            Thread.onSpinWait();
        }
        if (r == Producer.CLOSED) {
            throw new IllegalStateException("Sluice producer closed");
        }
        published++;
    }

    @Override
    public void flush() throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (forwarded.get() < published) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("subscriber forwarded " + forwarded.get() + " of " + published);
            }
            Thread.yield();
        }
        if (failed.get() > 0) {
            throw new IllegalStateException(failed.get() + " Sluice sends failed");
        }
    }

    @Override
    public void close() {
        producer.close();
        subscription.close();
        xadd.close();
    }
}
