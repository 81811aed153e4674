package io.sluice.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class ConsumerGroupTest {
    @TempDir
    Path dir;
    Broker broker;
    /** a manual clock: session expiry is driven by the test, never by sleeping */
    final AtomicLong now = new AtomicLong(1_700_000_000_000L);

    @BeforeEach
    void open() {
        broker = Broker.open(BrokerConfig.builder(dir).clock(now::get).build());
        broker.createTopic(TopicConfig.of("jobs", 4));
    }

    @AfterEach
    void close() {
        broker.close();
    }

    void produce(int n) throws Exception {
        try (Producer p = broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = 0; i < n; i++) {
                p.send(ProducerRecord.of("jobs", null, "job-" + i).withPartition(i % 4)).get(10, TimeUnit.SECONDS);
            }
        }
    }

    ConsumerConfig group(String client) {
        return ConsumerConfig.builder().groupId("workers").clientId(client).offsetReset(OffsetReset.EARLIEST).sessionTimeoutMillis(5_000).build();
    }

    static List<ConsumerRecord> drain(Consumer c) {
        List<ConsumerRecord> out = new ArrayList<>();
        List<ConsumerRecord> batch;
        while (!(batch = c.poll(Duration.ofMillis(200))).isEmpty()) {
            out.addAll(batch);
        }
        return out;
    }

    @Test
    void membersSplitThePartitionsAndRebalanceWhenOneJoinsOrLeaves() throws Exception {
        produce(40);
        Consumer a = broker.newConsumer(group("a"));
        a.subscribe("jobs");
        assertThat(a.assignment()).hasSize(4);

        Consumer b = broker.newConsumer(group("b"));
        b.subscribe("jobs");
        assertThat(b.assignment()).isEmpty(); // a still owns everything until it stops
        a.poll(Duration.ZERO); // heartbeat learns of the rebalance: a stops, rejoins, the new generation starts
        b.poll(Duration.ZERO); // b's rejoin picks up its share
        assertThat(a.assignment()).hasSize(2);
        assertThat(b.assignment()).hasSize(2);
        Set<TopicPartition> union = new HashSet<>(a.assignment());
        union.addAll(b.assignment());
        assertThat(union).hasSize(4);

        b.close();
        a.poll(Duration.ZERO);
        assertThat(a.assignment()).hasSize(4);
        a.close();
    }

    @Test
    void uncommittedEventsAreDeliveredAgainToTheNextOwner() throws Exception {
        produce(40);
        Consumer a = broker.newConsumer(group("a"));
        a.subscribe("jobs");
        List<ConsumerRecord> first = drain(a);
        assertThat(first).hasSize(40);
        // commit only partition 0's progress, then crash (no leave): the session expires
        TopicPartition p0 = new TopicPartition("jobs", 0);
        a.commitSync(java.util.Map.of(p0, a.position(p0)));
        now.addAndGet(6_000);

        Consumer b = broker.newConsumer(group("b"));
        b.subscribe("jobs");
        List<ConsumerRecord> redelivered = drain(b);
        assertThat(redelivered).hasSize(30);
        assertThat(redelivered).noneMatch(r -> r.partition() == 0);
        b.commitSync();
        b.close();
    }

    @Test
    void committedOffsetsSurviveARestart() throws Exception {
        produce(20);
        try (Consumer a = broker.newConsumer(group("a"))) {
            a.subscribe("jobs");
            assertThat(drain(a)).hasSize(20);
            a.commitSync();
        }
        broker.close();
        broker = Broker.open(BrokerConfig.builder(dir).clock(now::get).build());
        produce(8);
        try (Consumer again = broker.newConsumer(group("again"))) {
            again.subscribe("jobs");
            List<ConsumerRecord> rest = drain(again);
            assertThat(rest).hasSize(8);
            assertThat(rest).allMatch(r -> r.offset() >= 5);
            assertThat(again.committed(new TopicPartition("jobs", 0))).hasValue(5);
        }
    }

    @Test
    void aPushConsumerCommitsWhatItsHandlerAccepted() throws Exception {
        produce(12);
        List<String> seen = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicLong failOnce = new AtomicLong(1);
        try (ConsumerRunner runner = broker.startConsumer(group("push"), "jobs", records -> {
            if (failOnce.getAndDecrement() > 0) {
                throw new IllegalStateException("first batch fails");
            }
            records.forEach(r -> seen.add(r.valueAsString()));
        })) {
            io.sluice.testkit.Await.until("12 records handled", java.time.Duration.ofSeconds(20), () -> seen.size() >= 12);
            assertThat(runner.failures()).isEqualTo(1);
        }
        assertThat(new HashSet<>(seen)).hasSize(12);
        long committed = 0;
        for (TopicPartition tp : broker.partitionsOf("jobs")) {
            committed += broker.groups().committed("workers", tp).orElse(0);
        }
        assertThat(committed).isEqualTo(12);
    }
}
