package io.sluice.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** close() while producers are racing it: every send is answered, and every success is in the journal. */
class CloseDrainsTest {
    @TempDir
    Path dir;

    @Test
    void closingUnderLoadAnswersEverySendAndKeepsEverySuccess() throws Exception {
        ConcurrentHashMap<Long, Boolean> acked = new ConcurrentHashMap<>();
        AtomicLong sent = new AtomicLong();
        AtomicLong answered = new AtomicLong();
        AtomicLong rejected = new AtomicLong();
        Broker broker = Broker.open(BrokerConfig.builder(dir).ringSize(256).build());
        broker.createTopic(TopicConfig.of("t", 1));
        Producer producer = broker.newProducer(ProducerConfig.builder().maxBlockMillis(100).build());
        CountDownLatch started = new CountDownLatch(3);
        Thread[] threads = new Thread[3];
        for (int t = 0; t < threads.length; t++) {
            threads[t] = new Thread(() -> {
                started.countDown();
                while (true) {
                    sent.incrementAndGet();
                    long[] result = new long[1];
                    producer.send(ProducerRecord.of("t", new byte[16]), (p, offset, error) -> {
                        answered.incrementAndGet();
                        if (error == null) {
                            acked.put(offset, Boolean.TRUE);
                        } else {
                            assertThat(error).isInstanceOfAny(SluiceException.ClosedException.class, SluiceException.BackPressureException.class);
                            rejected.incrementAndGet();
                            result[0] = -1;
                        }
                    });
                    if (result[0] == -1 && broker.isClosed()) {
                        return;
                    }
                }
            }, "racer-" + t);
            threads[t].start();
        }
        started.await();
        io.sluice.testkit.Await.until("5,000 acknowledgements under load", java.time.Duration.ofSeconds(10),
                () -> acked.size() >= 5_000);
        broker.close();
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(30));
            assertThat(t.isAlive()).isFalse();
        }
        assertThat(answered.get()).isEqualTo(sent.get());
        assertThat(rejected.get()).isGreaterThan(0);
        try (Broker reopened = Broker.open(BrokerConfig.builder(dir).build())) {
            long end = reopened.endOffset(new TopicPartition("t", 0));
            assertThat(end).isEqualTo(acked.size());
            assertThat(acked.keySet()).allMatch(o -> o < end);
        }
    }
}
