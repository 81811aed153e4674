package io.sluice.redis;

import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;
import io.sluice.testkit.Await;
import io.sluice.testkit.RedisServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every client connection is cut ({@code CLIENT KILL TYPE normal}) again and again while a producer sends and two
 * group members consume (each time 100 more events arrived): sends and polls fail or are retried, but every
 * acknowledged send is received by the group.
 */
@ExtendWith(ServicesExtension.class)
class ConnectionCutTest {
    private static final int EVENTS = 3_000;

    @Test
    void connectionsCutOverAndOverLoseNoAcknowledgedEvent(RedisServer redis) throws Exception {
        RedisStreamsConfig cfg = RedisStreamsRoundTripTest.config(redis).claimIdleMillis(300).claimIntervalMillis(50)
                .commandTimeoutMillis(5_000).build();
        Set<String> acknowledged = ConcurrentHashMap.newKeySet();
        AtomicLong failedSends = new AtomicLong();
        AtomicLong consumerErrors = new AtomicLong();
        AtomicLong cuts = new AtomicLong();
        Map<String, Integer> received = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<RedisStreamsConsumer> members = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        try (RedisStreamsProducer producer = new RedisStreamsProducer(cfg)) {
            for (int m = 0; m < 2; m++) {
                RedisStreamsConsumer member = new RedisStreamsConsumer(cfg, ConsumerConfig.builder().groupId("g").clientId("m" + m)
                        .offsetReset(OffsetReset.EARLIEST).build());
                member.subscribe("cut");
                members.add(member);
                threads.add(new Thread(() -> {
                    while (!stop.get()) {
                        try {
                            for (ConsumerRecord r : member.poll(Duration.ofMillis(50))) {
                                received.merge(r.valueAsString(), 1, Integer::sum);
                            }
                            member.commitSync();
                        } catch (SluiceException e) {
                            consumerErrors.incrementAndGet(); // the poll or commit was cut off: carry on
                        }
                    }
                }, "cut-test-member-" + m));
            }
            threads.add(new Thread(() -> {
                // progress-driven nemesis: cut every connection each time the group has received 100 more events
                while (!stop.get()) {
                    redis.command("CLIENT", "KILL", "TYPE", "normal");
                    cuts.incrementAndGet();
                    int seen = received.size();
                    Await.until("100 more events received", Duration.ofSeconds(120), () -> received.size() >= seen + 100 || stop.get());
                }
            }, "cut-test-nemesis"));
            threads.forEach(Thread::start);
            try {
                for (int i = 0; i < EVENTS; i++) {
                    String v = "e" + i;
                    producer.send(ProducerRecord.of("cut", null, v), (p, offset, error) -> {
                        if (error == null) {
                            acknowledged.add(v);
                        } else {
                            failedSends.incrementAndGet();
                        }
                    });
                }
                producer.flush();
                Await.until("every acknowledged event received", Duration.ofSeconds(120),
                        () -> received.keySet().containsAll(acknowledged));
            } finally {
                stop.set(true);
                for (Thread t : threads) {
                    t.join(30_000);
                }
                members.forEach(RedisStreamsConsumer::close);
            }
        }
        long duplicated = received.values().stream().mapToInt(n -> n - 1).sum();
        System.out.printf("[reliability] connections cut %d times: sent %d, acknowledged %d, failed %d, received %d, duplicated %d, consumer errors %d%n",
                cuts.get(), EVENTS, acknowledged.size(), failedSends.get(), received.size(), duplicated, consumerErrors.get());
        Set<String> lost = new HashSet<>(acknowledged);
        lost.removeAll(received.keySet());
        assertThat(cuts.get()).isPositive();
        assertThat(lost).isEmpty();
    }
}
