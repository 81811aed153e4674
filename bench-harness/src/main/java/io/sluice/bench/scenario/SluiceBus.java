package io.sluice.bench.scenario;

import io.sluice.bench.internal.TradeMessages;
import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SendCallback;
import io.sluice.core.Subscription;
import io.sluice.core.TopicConfig;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Sluice's bus as the event-bus scenario uses it: a journaled or a memory-only topic, a live subscriber (on a journaled
 * topic it runs after the journal writer, so every latency includes the journal append) and {@link Producer#trySend}
 * of pre-built records.
 */
final class SluiceBus implements BusUnderTest {
    private final Broker broker;
    private final String topic;
    private final Producer producer;
    private final Subscription subscription;
    private final ProducerRecord[] records;
    private final AtomicLong errors = new AtomicLong();
    private final SendCallback callback;

    /** @param journaled false for a memory-only topic (then {@code acks} must be {@link Acks#MEMORY}) */
    SluiceBus(Broker broker, String topic, int partitions, boolean journaled, byte[][] payloads, LatencyProbe probe, Acks acks) {
        this.broker = broker;
        this.topic = topic;
        broker.createTopicIfAbsent(TopicConfig.builder(topic).partitions(partitions).journaled(journaled).build());
        this.records = new ProducerRecord[payloads.length];
        for (int i = 0; i < payloads.length; i++) {
            records[i] = new ProducerRecord(topic, i % partitions, null, payloads[i], List.of(), ProducerRecord.NO_TIMESTAMP);
        }
        this.subscription = broker.subscribe(topic, "latency-probe",
                (event, endOfBatch) -> probe.onEvent(event.partition(), TradeMessages.id(event.valueBuffer(), event.valueLength())));
        this.producer = broker.newProducer(ProducerConfig.builder().acks(acks).build());
        this.callback = (partition, offset, error) -> {
            if (error != null) {
                errors.incrementAndGet();
            }
        };
    }

    @Override
    public boolean tryPublish(int id) {
        long r = producer.trySend(records[id], callback);
        if (r == Producer.CLOSED) {
            throw new IllegalStateException("producer closed during the benchmark");
        }
        return r == Producer.ACCEPTED;
    }

    @Override
    public long errors() {
        return errors.get();
    }

    @Override
    public void close() {
        producer.close();
        subscription.close();
        broker.deleteTopic(topic); // its partitions leave the journal threads free for the next cell's
    }
}
