package io.sluice.net.client;

import io.netty.buffer.ByteBuf;
import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.PartitionReader;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.RecordMetadata;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.ListOffsets;
import io.sluice.net.server.ServerStats;
import io.sluice.net.testing.RawClient;
import io.sluice.net.testing.TestBroker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code RemoteConsumer.seekToTimestamp} against a real broker over loopback: one LIST_OFFSETS (version 1) round trip
 * that lands where the embedded consumer's seek lands ({@code Broker.offsetForTimestamp}: the first offset whose
 * timestamp is at or after the given one, the end offset if none), for timestamps before, between, equal to and after
 * the stored ones, across several stored batches; version 0 is still answered, and bad requests get typed errors.
 */
class SeekToTimestampTest {
    private static final String TOPIC = "times";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final int ROUNDS = 8;
    private static final int PER_ROUND = 30;
    private static final int RECORDS = ROUNDS * PER_ROUND;
    private static final long BASE = 1_700_000_000_000L;

    @TempDir
    Path dir;
    private TestBroker broker;

    @BeforeEach
    void start() {
        broker = TestBroker.start(dir);
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    /** Record n's timestamp: three records share each timestamp, consecutive timestamps are 10 ms apart. */
    private static long timestamp(long n) {
        return BASE + (n / 3) * 10;
    }

    /**
     * {@link #RECORDS} records over the network, many per request, in rounds that each wait for their acknowledgements,
     * so the journal holds several batches of several records.
     */
    private void produce() throws Exception {
        broker.broker.createTopic(TopicConfig.of(TOPIC, 2));
        List<CompletableFuture<RecordMetadata>> acks = new ArrayList<>();
        try (Producer producer = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            for (int n = 0; n < RECORDS; n++) {
                acks.add(producer.send(new ProducerRecord(TOPIC, 0, null, ("v" + n).getBytes(StandardCharsets.UTF_8),
                        List.of(), timestamp(n))));
                if (n % PER_ROUND == PER_ROUND - 1) {
                    producer.flush();
                }
            }
        }
        for (int n = 0; n < RECORDS; n++) {
            assertThat(acks.get(n).get().offset()).isEqualTo(n);
        }
    }

    /** The record counts of the journal's batches, one per read of the embedded reader with maxBytes 1. */
    private List<Integer> storedBatchSizes() {
        List<Integer> sizes = new ArrayList<>();
        try (PartitionReader reader = broker.broker.openReader(TP)) {
            long before = reader.position();
            ByteBuffer[] copy = new ByteBuffer[1];
            while (reader.readBatches(1, length -> copy[0] = ByteBuffer.allocate(length)) > 0) {
                sizes.add((int) (reader.position() - before));
                before = reader.position();
            }
        }
        return sizes;
    }

    /** Timestamps before the first record, equal to each stored one, between each two, and after the last. */
    private static List<Long> probes() {
        Set<Long> probes = new TreeSet<>(List.of(Long.MIN_VALUE, -1L, 0L, BASE - 1, timestamp(RECORDS - 1) + 1,
                Long.MAX_VALUE));
        for (long n = 0; n < RECORDS; n += 3) {
            probes.add(timestamp(n));
            probes.add(timestamp(n) + 5);
        }
        return new ArrayList<>(probes);
    }

    @Test
    void remoteSeekToTimestampLandsWhereTheEmbeddedConsumerLandsInOneRoundTrip() throws Exception {
        produce();
        List<Integer> batches = storedBatchSizes();
        assertThat(batches).as("several stored batches").hasSizeGreaterThanOrEqualTo(ROUNDS);
        assertThat(batches).as("batches of several records").anyMatch(count -> count > 1);

        ConsumerConfig config = ConsumerConfig.builder().offsetReset(OffsetReset.LATEST).build();
        try (Consumer embedded = broker.broker.newConsumer(config);
             Consumer remote = new RemoteConsumer(broker.bootstrap(), config)) {
            embedded.assign(Set.of(TP));
            remote.assign(Set.of(TP));
            for (long ts : probes()) {
                embedded.seekToTimestamp(TP, ts);
                ServerStats before = broker.server().stats();
                remote.seekToTimestamp(TP, ts);
                ServerStats after = broker.server().stats();
                assertThat(remote.position(TP)).as("remote position for timestamp %d", ts).isEqualTo(embedded.position(TP));
                assertThat(after.requests() - before.requests()).as("round trips for timestamp %d", ts).isEqualTo(1);
                assertThat(after.fetchedRecords()).as("no record fetched to seek").isEqualTo(before.fetchedRecords());
            }
        }
        // the specification itself, independently of the embedded consumer
        try (Consumer remote = new RemoteConsumer(broker.bootstrap(), config)) {
            remote.assign(Set.of(TP));
            remote.seekToTimestamp(TP, Long.MIN_VALUE);
            assertThat(remote.position(TP)).as("before the first record").isZero();
            remote.seekToTimestamp(TP, BASE - 1);
            assertThat(remote.position(TP)).isZero();
            remote.seekToTimestamp(TP, timestamp(100));
            assertThat(remote.position(TP)).as("equal: the first of the records with that timestamp").isEqualTo(99);
            remote.seekToTimestamp(TP, timestamp(100) + 1);
            assertThat(remote.position(TP)).as("between: the first record after it").isEqualTo(102);
            remote.seekToTimestamp(TP, timestamp(RECORDS - 1) + 1);
            assertThat(remote.position(TP)).as("after the last record: the end offset").isEqualTo(RECORDS);
            remote.seekToTimestamp(TP, Long.MAX_VALUE);
            assertThat(remote.position(TP)).isEqualTo(RECORDS);
        }
    }

    @Test
    void aSeekByTimestampDropsPrefetchedRecordsAndPollReadsFromThere() throws Exception {
        produce();
        ConsumerConfig config = ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).maxPollRecords(5).build();
        try (Consumer remote = new RemoteConsumer(broker.bootstrap(), config)) {
            remote.assign(Set.of(TP));
            assertThat(poll(remote, 5)).extracting(ConsumerRecord::offset).containsExactly(0L, 1L, 2L, 3L, 4L);
            remote.seekToTimestamp(TP, timestamp(150));
            List<ConsumerRecord> read = poll(remote, 3);
            assertThat(read).extracting(ConsumerRecord::offset).startsWith(150L, 151L, 152L);
            assertThat(read.get(0).timestamp()).isEqualTo(timestamp(150));
            remote.seekToTimestamp(TP, timestamp(3) - 1);
            assertThat(poll(remote, 1).get(0).offset()).as("backwards as well").isEqualTo(3);
        }
    }

    @Test
    void anEmptyPartitionAnswersItsEndOffsetForAnyTimestamp() throws Exception {
        produce();
        TopicPartition empty = new TopicPartition(TOPIC, 1);
        try (Consumer remote = new RemoteConsumer(broker.bootstrap(), ConsumerConfig.builder().build())) {
            remote.assign(Set.of(empty));
            for (long ts : List.of(Long.MIN_VALUE, 0L, BASE, Long.MAX_VALUE)) {
                remote.seekToTimestamp(empty, ts);
                assertThat(remote.position(empty)).isEqualTo(broker.broker.offsetForTimestamp(empty, ts)).isZero();
            }
        }
    }

    @Test
    void versionZeroIsStillAnsweredWithStartAndEndOffsets() throws Exception {
        produce();
        try (RawClient raw = new RawClient(broker.bootstrap())) {
            ByteBuf body = raw.call(ApiKey.LIST_OFFSETS, ListOffsets.VERSION_RANGE,
                    out -> ListOffsets.Request.ranges(TOPIC, List.of()).encode(out, ListOffsets.VERSION_RANGE));
            assertThat(body.readableBytes()).as("two partitions of 4 + 8 + 8 bytes, no timestamp offset").isEqualTo(4 + 2 * 20);
            assertThat(ListOffsets.Response.decode(body, ListOffsets.VERSION_RANGE).partitions()).containsExactly(
                    ListOffsets.PartitionOffsets.range(0, 0, RECORDS), ListOffsets.PartitionOffsets.range(1, 0, 0));

            // version 1 for several partitions at once; NO_TIMESTAMP answers the start offset without a search
            ByteBuf v1 = raw.call(ApiKey.LIST_OFFSETS, ListOffsets.VERSION_TIMESTAMPS, new ListOffsets.Request(TOPIC, List.of(
                    new ListOffsets.PartitionQuery(0, timestamp(42)), new ListOffsets.PartitionQuery(1, BASE),
                    new ListOffsets.PartitionQuery(0, ListOffsets.NO_TIMESTAMP)))::encode);
            assertThat(ListOffsets.Response.decode(v1, ListOffsets.VERSION_TIMESTAMPS).partitions()).containsExactly(
                    new ListOffsets.PartitionOffsets(0, 0, RECORDS, 42), new ListOffsets.PartitionOffsets(1, 0, 0, 0),
                    new ListOffsets.PartitionOffsets(0, 0, RECORDS, 0));

            assertThatThrownBy(() -> raw.call(ApiKey.LIST_OFFSETS, (short) 2, ListOffsets.Request.ranges(TOPIC, List.of())::encode))
                    .isInstanceOfSatisfying(SluiceException.class,
                            e -> assertThat(e.code()).isEqualTo(SluiceException.Code.UNSUPPORTED_VERSION));
        }
    }

    @Test
    void badRequestsGetTypedErrorsAndTheConnectionStaysUsable() throws Exception {
        produce();
        broker.broker.createTopic(new TopicConfig("memory-only", 1, -1, -1, false));
        try (RawClient raw = new RawClient(broker.bootstrap())) {
            assertThatThrownBy(() -> raw.call(ApiKey.LIST_OFFSETS, ListOffsets.VERSION_TIMESTAMPS, new ListOffsets.Request("no-such-topic",
                    List.of(new ListOffsets.PartitionQuery(0, BASE)))::encode))
                    .isInstanceOf(SluiceException.UnknownTopicException.class).hasMessageContaining("no-such-topic");
            assertThatThrownBy(() -> raw.call(ApiKey.LIST_OFFSETS, ListOffsets.VERSION_TIMESTAMPS, new ListOffsets.Request(TOPIC,
                    List.of(new ListOffsets.PartitionQuery(7, BASE)))::encode))
                    .isInstanceOf(SluiceException.UnknownTopicException.class).hasMessageContaining(TOPIC + "-7");
            assertThatThrownBy(() -> raw.call(ApiKey.LIST_OFFSETS, ListOffsets.VERSION_TIMESTAMPS, new ListOffsets.Request("memory-only",
                    List.of(new ListOffsets.PartitionQuery(0, BASE)))::encode))
                    .isInstanceOf(SluiceException.InvalidConfigException.class).hasMessageContaining("memory-only");
            // a version-0 body sent as version 1: its partitions lack their timestamps
            assertThatThrownBy(() -> raw.call(ApiKey.LIST_OFFSETS, ListOffsets.VERSION_TIMESTAMPS,
                    out -> ListOffsets.Request.ranges(TOPIC, List.of(0)).encode(out, ListOffsets.VERSION_RANGE)))
                    .isInstanceOfSatisfying(SluiceException.class,
                            e -> assertThat(e.code()).isEqualTo(SluiceException.Code.INVALID_REQUEST));

            ByteBuf ok = raw.call(ApiKey.LIST_OFFSETS, ListOffsets.VERSION_TIMESTAMPS, new ListOffsets.Request(TOPIC,
                    List.of(new ListOffsets.PartitionQuery(0, timestamp(7))))::encode);
            assertThat(ListOffsets.Response.decode(ok, ListOffsets.VERSION_TIMESTAMPS).partitions())
                    .containsExactly(new ListOffsets.PartitionOffsets(0, 0, RECORDS, 6));
        }
    }

    private static List<ConsumerRecord> poll(Consumer consumer, int atLeast) {
        List<ConsumerRecord> read = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (read.size() < atLeast && System.nanoTime() < deadline) {
            read.addAll(consumer.poll(Duration.ofMillis(100)));
        }
        return read;
    }
}
