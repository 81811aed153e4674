package io.sluice.bench.scenario.redis;

import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.redis.RedisStreamsConfig;
import io.sluice.redis.RedisStreamsConsumer;
import org.HdrHistogram.Histogram;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Sluice's receiving side: {@code consumers} {@link RedisStreamsConsumer}s subscribed to the run's topic in one
 * group, each polling on its own thread ({@code poll(50 ms)}: XREADGROUP … BLOCK 50) and committing with
 * {@code commitAsync()} (the XACKs of up to 10 ms travel as one, in front of a read: {@code asyncCommitLingerMillis = 10}).
 */
final class TransportReceivers implements Receivers {
    static final String GROUP = "bench-group";
    /** commitAsync acknowledgements travel together for up to this long (RedisStreamsConfig.asyncCommitLingerMillis). */
    static final long ACK_LINGER_MILLIS = 10;
    private final List<RedisStreamsConsumer> consumers = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile boolean stopped;

    TransportReceivers(RedisStreamsConfig config, String topic, int count, Tally tally) {
        for (int c = 0; c < count; c++) {
            RedisStreamsConsumer consumer = new RedisStreamsConsumer(config, ConsumerConfig.builder().groupId(GROUP)
                    .clientId("e2e-" + c).offsetReset(OffsetReset.LATEST).maxPollRecords(500).build());
            consumer.subscribe(topic);
            consumers.add(consumer);
            Histogram h = tally.newHistogram();
            threads.add(new Thread(() -> loop(consumer, tally, h), "e2e-transport-consumer-" + c));
        }
        threads.forEach(Thread::start);
    }

    private void loop(RedisStreamsConsumer consumer, Tally tally, Histogram h) {
        Duration block = Duration.ofMillis(50);
        try {
            while (!stopped) {
                List<ConsumerRecord> batch = consumer.poll(block);
                if (batch.isEmpty()) {
                    continue;
                }
                long now = System.nanoTime();
                for (ConsumerRecord r : batch) {
                    tally.received(r.value(), now, h);
                }
                consumer.commitAsync();
            }
        } catch (RuntimeException e) {
            if (!stopped) {
                failure.compareAndSet(null, e);
            }
        }
    }

    @Override
    public List<Thread> threads() {
        return threads;
    }

    @Override
    public void stop() throws InterruptedException {
        stopped = true;
        for (Thread t : threads) {
            t.join(10_000);
        }
    }

    @Override
    public Throwable failure() {
        return failure.get();
    }

    @Override
    public void close() throws InterruptedException {
        if (!stopped) {
            stop();
        }
        consumers.forEach(RedisStreamsConsumer::close);
    }
}
