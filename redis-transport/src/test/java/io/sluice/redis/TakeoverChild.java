package io.sluice.redis;

import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * A group member in a child JVM for {@link ConsumerTakeoverTest}: polls one batch, reports it on stdout
 * ({@code POLLED <n>}) and then hangs without committing, until the test kills the process.
 * Args: redis URL, key prefix, topic, group, maxPollRecords.
 */
public final class TakeoverChild {
    public static void main(String[] args) {
        RedisStreamsConfig cfg = RedisStreamsConfig.builder(args[0]).keyPrefix(args[1]).build();
        RedisStreamsConsumer consumer = new RedisStreamsConsumer(cfg, ConsumerConfig.builder().groupId(args[3]).clientId("doomed")
                .offsetReset(OffsetReset.EARLIEST).maxPollRecords(Integer.parseInt(args[4])).build());
        consumer.subscribe(args[2]);
        List<ConsumerRecord> batch = List.of();
        while (batch.isEmpty()) {
            batch = consumer.poll(Duration.ofMillis(200));
        }
        System.out.println("POLLED " + batch.size());
        System.out.flush();
        while (true) {
            LockSupport.park();
        }
    }
}
