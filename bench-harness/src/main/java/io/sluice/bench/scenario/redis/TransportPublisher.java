package io.sluice.bench.scenario.redis;

import io.sluice.core.ProducerRecord;
import io.sluice.core.SendCallback;
import io.sluice.redis.RedisStreamsConfig;
import io.sluice.redis.RedisStreamsProducer;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/** Sluice's side: the application sends through {@link RedisStreamsProducer} (the {@code Producer} interface). */
final class TransportPublisher implements Publisher {
    private final RedisStreamsProducer producer;
    private final AtomicLong failed = new AtomicLong();
    private final AtomicReference<Throwable> firstError = new AtomicReference<>();
    private final SendCallback callback = (partition, offset, error) -> {
        if (error != null) {
            failed.incrementAndGet();
            firstError.compareAndSet(null, error);
        }
    };

    TransportPublisher(RedisStreamsConfig config) {
        this.producer = new RedisStreamsProducer(config);
    }

    @Override
    public void publish(String topic, byte[] envelope) {
        producer.send(ProducerRecord.of(topic, envelope), callback);
    }

    @Override
    public void flush() {
        producer.flush();
        if (failed.get() > 0) {
            throw new IllegalStateException(failed.get() + " sends failed", firstError.get());
        }
    }

    RedisStreamsProducer producer() {
        return producer;
    }

    @Override
    public void close() {
        producer.close();
    }
}
