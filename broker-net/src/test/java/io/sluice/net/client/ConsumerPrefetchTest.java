package io.sluice.net.client;

import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.net.testing.TestBroker;
import io.sluice.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The network consumer's prefetch, counted in the requests a real broker received: a consumer that reads on sends
 * the next fetch as a poll returns; one that seeks before every poll stops prefetching once a seek abandoned a
 * prefetch (each of its reads is then one fetch, not a fetch plus a dropped one it waits behind), and starts again
 * as soon as it reads on.
 */
class ConsumerPrefetchTest {
    private static final String TOPIC = "prefetch";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final int RECORDS = 2_000;
    private static final int PER_POLL = 10;

    @TempDir
    Path dir;
    private TestBroker broker;

    @BeforeEach
    void fill() throws Exception {
        broker = TestBroker.start(dir);
        broker.broker.createTopic(TopicConfig.of(TOPIC, 1));
        try (Producer producer = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            for (int n = 0; n < RECORDS; n++) {
                producer.send(new ProducerRecord(TOPIC, 0, null, value(n), List.of(), ProducerRecord.NO_TIMESTAMP));
            }
            producer.flush();
        }
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    private static byte[] value(long n) {
        return ("value-" + n).getBytes(StandardCharsets.UTF_8);
    }

    private long requests() {
        return broker.server().stats().requests();
    }

    private RemoteConsumer consumer() {
        RemoteConsumer c = new RemoteConsumer(broker.bootstrap(),
                ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).maxPollRecords(PER_POLL).build());
        c.assign(Set.of(TP));
        return c;
    }

    /** A seek to {@code offset} and the poll that follows it: exactly the records from there. */
    private static void readAt(RemoteConsumer c, long offset) {
        c.seek(TP, offset);
        List<ConsumerRecord> got = c.poll(Duration.ofSeconds(10));
        assertThat(got).as("a poll after seek(%d)", offset).hasSize(PER_POLL);
        for (int i = 0; i < PER_POLL; i++) {
            assertThat(got.get(i).offset()).isEqualTo(offset + i);
            assertThat(got.get(i).value()).isEqualTo(value(offset + i));
        }
    }

    @Test
    void aConsumerThatSeeksBeforeEveryPollSendsOneFetchPerReadOnceASeekAbandonedAPrefetch() {
        SplittableRandom random = new SplittableRandom(7);
        try (RemoteConsumer c = consumer()) {
            readAt(c, 0);  // prefetches: nothing says yet that this consumer seeks
            readAt(c, 500); // abandons that prefetch; its request was answered before this poll's fetch
            long before = requests();
            int reads = 50;
            for (int i = 0; i < reads; i++) {
                readAt(c, random.nextLong(RECORDS - PER_POLL));
            }
            assertThat(requests() - before).as("requests for %d reads at random offsets", reads).isEqualTo(reads);
        }
    }

    @Test
    void aConsumerThatReadsOnAfterARandomPhasePrefetchesAgain() {
        try (RemoteConsumer c = consumer()) {
            // random reads: prefetching stops after the first abandoned prefetch
            readAt(c, 0);
            readAt(c, 700);
            readAt(c, 300);
            readAt(c, 1_200);
            long beforeReadingOn = requests(); // nothing in flight: the last poll did not prefetch
            // reading on (no seek since the last poll): this poll returns buffered records and sends the next fetch
            List<ConsumerRecord> on = c.poll(Duration.ofSeconds(10));
            assertThat(on).hasSize(PER_POLL);
            assertThat(on.get(0).offset()).isEqualTo(1_200 + PER_POLL);
            Await.until("the prefetch sent as the poll that read on returned", Duration.ofSeconds(10),
                    () -> requests() > beforeReadingOn);
            for (long expected = 1_200 + 2 * PER_POLL; expected < RECORDS; expected += PER_POLL) {
                List<ConsumerRecord> got = c.poll(Duration.ofSeconds(10));
                assertThat(got).hasSize(PER_POLL);
                for (int i = 0; i < PER_POLL; i++) {
                    assertThat(got.get(i).offset()).isEqualTo(expected + i);
                }
            }
        }
    }
}
