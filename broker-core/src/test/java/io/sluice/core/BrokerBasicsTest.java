package io.sluice.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BrokerBasicsTest {
    @TempDir
    Path dir;
    Broker broker;

    Broker open() {
        broker = Broker.open(BrokerConfig.builder(dir).ringSize(1024).build());
        return broker;
    }

    @AfterEach
    void close() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void aProducerIsToldATopicWasDeletedAndSendsIntoTheTopicCreatedAgainUnderItsName() throws Exception {
        open().createTopic(TopicConfig.of("orders", 1));
        try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            assertThat(producer.send(ProducerRecord.of("orders", null, "old")).get(10, TimeUnit.SECONDS).offset()).isZero();
            assertThat(producer.send(ProducerRecord.of("orders", null, "old")).get(10, TimeUnit.SECONDS).offset()).isEqualTo(1);

            broker.deleteTopic("orders");
            assertThatThrownBy(() -> producer.trySend(ProducerRecord.of("orders", null, "gone"), null))
                    .isInstanceOf(SluiceException.UnknownTopicException.class);

            broker.createTopic(TopicConfig.of("orders", 2));
            RecordMetadata md = producer.send(new ProducerRecord("orders", 1, null, "new".getBytes(StandardCharsets.UTF_8),
                    List.of(), ProducerRecord.NO_TIMESTAMP)).get(10, TimeUnit.SECONDS);
            assertThat(md.partition()).isEqualTo(1); // the new topic's second partition: the old one had one
            assertThat(md.offset()).isZero();
        }
    }

    @Test
    void acknowledgedEventsAreReadBackInOrderWithDenseOffsets() throws Exception {
        open().createTopic(TopicConfig.of("orders", 1));
        try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 1000; i++) {
                RecordMetadata md = producer.send(ProducerRecord.of("orders", "k" + i, "v" + i)).get(10, TimeUnit.SECONDS);
                assertThat(md.offset()).isEqualTo(i);
                assertThat(md.partition()).isZero();
            }
        }
        try (Consumer consumer = broker.newConsumer(ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).build())) {
            consumer.assign(Set.of(new TopicPartition("orders", 0)));
            List<ConsumerRecord> all = new ArrayList<>();
            while (all.size() < 1000) {
                all.addAll(consumer.poll(Duration.ofSeconds(5)));
            }
            for (int i = 0; i < 1000; i++) {
                assertThat(all.get(i).offset()).isEqualTo(i);
                assertThat(all.get(i).keyAsString()).isEqualTo("k" + i);
                assertThat(all.get(i).valueAsString()).isEqualTo("v" + i);
            }
        }
    }

    @Test
    void headersAndTimestampsRoundTrip() throws Exception {
        open().createTopic(TopicConfig.of("t", 1));
        try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            producer.send(ProducerRecord.of("t", "k", "v").withHeaders(List.of(Header.of("trace", "abc"))).withTimestamp(42L))
                    .get(10, TimeUnit.SECONDS);
        }
        try (Consumer consumer = broker.newConsumer(ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).build())) {
            consumer.subscribe("t");
            List<ConsumerRecord> got = consumer.poll(Duration.ofSeconds(5));
            assertThat(got).hasSize(1);
            assertThat(got.get(0).timestamp()).isEqualTo(42L);
            assertThat(got.get(0).headers()).containsExactly(Header.of("trace", "abc"));
        }
    }

    @Test
    void topicsAndEventsSurviveACleanRestart() throws Exception {
        open().createTopic(TopicConfig.builder("events").partitions(3).retentionBytes(1 << 30).build());
        try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 30; i++) {
                producer.send(ProducerRecord.of("events", null, "e" + i)).get(10, TimeUnit.SECONDS);
            }
        }
        broker.close();
        open();
        TopicDescription d = broker.describeTopic("events");
        assertThat(d.config().partitions()).isEqualTo(3);
        assertThat(d.config().retentionBytes()).isEqualTo(1 << 30);
        assertThat(d.partitions()).extracting(TopicDescription.PartitionInfo::endOffset).containsExactly(10L, 10L, 10L);
        try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            RecordMetadata md = producer.send(ProducerRecord.of("events", null, "after").withPartition(1)).get(10, TimeUnit.SECONDS);
            assertThat(md.offset()).isEqualTo(10L);
        }
    }

    @Test
    void sameKeyAlwaysLandsOnTheSamePartition() throws Exception {
        open().createTopic(TopicConfig.of("keyed", 4));
        try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            int first = producer.send(ProducerRecord.of("keyed", "user-7", "a")).get().partition();
            for (int i = 0; i < 20; i++) {
                assertThat(producer.send(ProducerRecord.of("keyed", "user-7", "b")).get().partition()).isEqualTo(first);
            }
        }
    }

    @Test
    void unknownTopicOversizedEventAndClosedBrokerAreTypedErrors() {
        open().createTopic(TopicConfig.of("t", 1));
        Producer producer = broker.newProducer(ProducerConfig.DEFAULT);
        assertThatThrownBy(() -> producer.send(ProducerRecord.of("nope", "v".getBytes(StandardCharsets.UTF_8))).get())
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(SluiceException.UnknownTopicException.class)
                .hasMessageContaining("nope");
        byte[] big = new byte[BrokerConfig.DEFAULT_MAX_EVENT_SIZE + 1];
        assertThatThrownBy(() -> producer.send(ProducerRecord.of("t", big)).get())
                .hasCauseInstanceOf(SluiceException.RecordTooLargeException.class).hasMessageContaining("maxEventSize");
        assertThatThrownBy(() -> broker.createTopic(TopicConfig.of("t", 1)))
                .isInstanceOf(SluiceException.TopicExistsException.class);
        broker.close();
        assertThat(producer.trySend(ProducerRecord.of("t", new byte[1]), null)).isEqualTo(Producer.CLOSED);
        assertThatThrownBy(() -> producer.send(ProducerRecord.of("t", new byte[1])).get())
                .hasCauseInstanceOf(SluiceException.ClosedException.class);
    }

    @Test
    void invalidSettingsAreRejectedWithTheSettingName() {
        assertThatThrownBy(() -> BrokerConfig.builder(dir).ringSize(1000).build())
                .isInstanceOf(SluiceException.InvalidConfigException.class).hasMessageContaining("ringSize").hasMessageContaining("1000");
        assertThatThrownBy(() -> TopicConfig.of("t", 0)).hasMessageContaining("partitions");
        assertThatThrownBy(() -> TopicConfig.of("../etc", 1)).hasMessageContaining("topic name");
        assertThatThrownBy(() -> BrokerConfig.builder(dir).maxEventSize(1).build()).hasMessageContaining("maxEventSize");
    }

    @Test
    void aFullRingIsReportedAsBackPressureNotDropped() throws Exception {
        open().createTopic(TopicConfig.builder("bus").journaled(false).build());
        CountDownLatch release = new CountDownLatch(1);
        try (Subscription ignored = broker.subscribe("bus", "stuck", (e, end) -> release.await())) {
            Producer producer = broker.newProducer(ProducerConfig.builder().acks(Acks.MEMORY).maxBlockMillis(0).build());
            ProducerRecord r = ProducerRecord.of("bus", new byte[8]);
            int accepted = 0;
            long result;
            while ((result = producer.trySend(r, null)) == Producer.ACCEPTED) {
                accepted++;
            }
            assertThat(result).isEqualTo(Producer.BACK_PRESSURED);
            // the subscriber holds one slot while blocked; every other slot is taken
            assertThat(accepted).isBetween(1024, 1025);
            CompletableFuture<RecordMetadata> f = producer.send(r);
            assertThatThrownBy(f::get).hasCauseInstanceOf(SluiceException.BackPressureException.class);
            assertThat(broker.metrics().partitions().get(0).backPressured()).isGreaterThan(0);
            release.countDown();
        }
    }

    @Test
    void liveSubscribersSeeJournaledEventsWithOffsets() throws Exception {
        open().createTopic(TopicConfig.of("live", 2));
        List<Long> offsets = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch seen = new CountDownLatch(10);
        try (Subscription s = broker.subscribe("live", "audit", (e, end) -> {
            offsets.add(e.offset());
            seen.countDown();
        }); Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 10; i++) {
                producer.send(ProducerRecord.of("live", null, "x").withPartition(i % 2)).get();
            }
            assertThat(seen.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(s.delivered()).isEqualTo(10);
        }
        assertThat(offsets).containsExactlyInAnyOrder(0L, 0L, 1L, 1L, 2L, 2L, 3L, 3L, 4L, 4L);
        BrokerMetrics m = broker.metrics();
        assertThat(m.totalJournaled()).isEqualTo(10);
        // the latency histograms sample one event in 64 per partition ring: here the first of each partition
        assertThat(m.publishToJournal().getTotalCount()).isEqualTo(2);
        assertThat(m.journalToSubscriber().getTotalCount()).isEqualTo(2);
    }

    @Test
    void theLatencyMetricsSampleOneEventIn64OfEachPartitionRing() throws Exception {
        open().createTopic(TopicConfig.of("sampled", 1));
        CountDownLatch seen = new CountDownLatch(130);
        try (Subscription s = broker.subscribe("sampled", "count", (e, end) -> seen.countDown());
             Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 130; i++) {
                producer.send(ProducerRecord.of("sampled", null, "x")).get(); // ring sequences 0..129
            }
            assertThat(seen.await(10, TimeUnit.SECONDS)).isTrue();
        }
        BrokerMetrics m = broker.metrics();
        assertThat(m.totalJournaled()).isEqualTo(130);
        assertThat(m.publishToJournal().getTotalCount()).as("sequences 0, 64 and 128").isEqualTo(3);
        assertThat(m.journalToSubscriber().getTotalCount()).isEqualTo(3);
    }

    @Test
    void syncAcksAreGroupCommitted() throws Exception {
        open().createTopic(TopicConfig.of("durable", 1));
        try (Producer producer = broker.newProducer(ProducerConfig.builder().acks(Acks.SYNC).build())) {
            List<CompletableFuture<RecordMetadata>> fs = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                fs.add(producer.send(ProducerRecord.of("durable", null, "s" + i)));
            }
            for (int i = 0; i < 100; i++) {
                assertThat(fs.get(i).get(10, TimeUnit.SECONDS).offset()).isEqualTo(i);
            }
        }
    }

    @Test
    void aSecondBrokerCannotOpenTheSameDirectory() {
        open();
        assertThatThrownBy(() -> Broker.open(BrokerConfig.builder(dir).build()))
                .isInstanceOf(SluiceException.InvalidConfigException.class).hasMessageContaining("in use");
    }
}
