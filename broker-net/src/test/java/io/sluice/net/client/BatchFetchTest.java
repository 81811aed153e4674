package io.sluice.net.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.Header;
import io.sluice.core.OffsetReset;
import io.sluice.core.PartitionReader;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.RecordMetadata;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.BrokerFront;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.Fetch;
import io.sluice.net.protocol.Wire;
import io.sluice.net.testing.RawClient;
import io.sluice.net.testing.TestBroker;
import io.sluice.records.RecordBatchReader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * FETCH version 1 against a real broker over loopback: the journal's record batches travel whole and unchanged, the
 * client skips the records before the offset it asked for, {@code maxBytes} counts whole batches (at least one), a
 * damaged batch reaches a network consumer as CORRUPT_RECORD naming partition and offset, and version 0 is still
 * answered.
 */
class BatchFetchTest {
    private static final String TOPIC = "batches";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final int RECORDS = 400;

    @TempDir
    Path dir;
    private TestBroker broker;

    @AfterEach
    void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    private static byte[] key(long n) {
        return n % 3 == 0 ? null : ("k" + n).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] value(long n) {
        return ("value-" + n + "-" + "x".repeat((int) (n % 23))).getBytes(StandardCharsets.UTF_8);
    }

    private static List<Header> headers(long n) {
        return n % 4 == 1 ? List.of(Header.of("h", "v" + n)) : List.of();
    }

    /**
     * Produces {@link #RECORDS} records over the network, many per request, so the journal stores them in batches of
     * several records; in four rounds of 100 that each wait for their acknowledgements, so there are at least four.
     */
    private void produce() throws Exception {
        broker.broker.createTopic(TopicConfig.of(TOPIC, 1));
        List<CompletableFuture<RecordMetadata>> acks = new ArrayList<>();
        try (Producer producer = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            for (int n = 0; n < RECORDS; n++) {
                acks.add(producer.send(new ProducerRecord(TOPIC, 0, key(n), value(n), headers(n), 1_000 + n)));
                if (n % 100 == 99) {
                    producer.flush();
                }
            }
        }
        for (int n = 0; n < RECORDS; n++) {
            assertThat(acks.get(n).get().offset()).isEqualTo(n);
        }
    }

    /** A stored batch: its base offset, record count and size in bytes. */
    record Batch(long baseOffset, int count, int size) {
        boolean holds(long offset) {
            return offset >= baseOffset && offset < baseOffset + count;
        }
    }

    /** The journal's batches, one per read of the embedded reader with maxBytes 1 (into heap buffers). */
    private List<Batch> storedBatches() {
        List<Batch> out = new ArrayList<>();
        long next = 0;
        try (PartitionReader reader = BrokerFront.of(broker.broker).openReader(TP)) {
            ByteBuffer[] copy = new ByteBuffer[1];
            while (reader.readBatches(1, length -> copy[0] = ByteBuffer.allocate(length)) > 0) {
                ByteBuffer b = copy[0];
                assertThat(b.position()).as("the reader filled the claimed bytes").isEqualTo(b.capacity());
                long base = b.getLong(0);
                int count = b.getInt(57);
                assertThat(base).as("batches are dense").isEqualTo(next);
                assertThat(reader.position()).isEqualTo(base + count);
                out.add(new Batch(base, count, b.capacity()));
                next = base + count;
            }
        }
        assertThat(next).isEqualTo(RECORDS);
        return out;
    }

    private static void assertRecord(ConsumerRecord r, long n) {
        assertThat(r.offset()).isEqualTo(n);
        assertThat(r.value()).isEqualTo(value(n));
        assertThat(r.key()).isEqualTo(key(n));
        assertThat(r.headers()).isEqualTo(headers(n));
        assertThat(r.timestamp()).isEqualTo(1_000 + n);
    }

    @Test
    void aNetworkConsumerReadsExactlyTheRecordsFromEveryOffsetInsideEveryBatch() throws Exception {
        broker = TestBroker.start(dir);
        produce();
        List<Batch> batches = storedBatches();
        assertThat(batches).as("the journal holds batches of several records").anyMatch(b -> b.count() > 1);

        ConsumerConfig config = ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).maxPollRecords(RECORDS).build();
        try (Consumer consumer = new RemoteConsumer(broker.bootstrap(), config)) {
            consumer.assign(Set.of(TP));
            for (long from = 0; from <= RECORDS; from++) {
                consumer.seek(TP, from);
                List<ConsumerRecord> read = new ArrayList<>();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (read.size() < RECORDS - from && System.nanoTime() < deadline) {
                    read.addAll(consumer.poll(Duration.ofMillis(100)));
                }
                assertThat(read).as("records read from offset %d", from).hasSize((int) (RECORDS - from));
                for (int i = 0; i < read.size(); i++) {
                    assertRecord(read.get(i), from + i);
                }
                assertThat(consumer.position(TP)).isEqualTo(RECORDS);
            }
        }
    }

    @Test
    void aFetchFromInsideABatchShipsThatWholeBatchUnchanged() throws Exception {
        broker = TestBroker.start(dir);
        produce();
        List<Batch> batches = storedBatches();
        try (RawClient raw = new RawClient(broker.bootstrap())) {
            for (Batch b : batches) {
                for (long from = b.baseOffset(); from < b.baseOffset() + b.count(); from++) {
                    ByteBuf body = fetch(raw, Fetch.VERSION_BATCHES, from, 1 << 20);
                    ByteBuf shipped = batchBytes(body);
                    assertThat(shipped.getLong(0)).as("first batch shipped for offset %d", from).isEqualTo(b.baseOffset());
                    List<ConsumerRecord> records = new ArrayList<>();
                    new RecordBatchReader().readAll(shipped.nioBuffer(), 0, shipped.readableBytes(), TOPIC, 0, from, records);
                    assertThat(records).hasSize((int) (RECORDS - from));
                    assertRecord(records.get(0), from);
                }
            }
        }
    }

    @Test
    void aMaxBytesSmallerThanOneBatchReturnsThatWholeBatchAndTheNextFetchProgresses() throws Exception {
        broker = TestBroker.start(dir);
        produce();
        List<Batch> batches = storedBatches();
        try (RawClient raw = new RawClient(broker.bootstrap())) {
            long offset = 0;
            for (Batch b : batches) {
                ByteBuf shipped = batchBytes(fetch(raw, Fetch.VERSION_BATCHES, offset, 1));
                assertThat(shipped.readableBytes()).as("exactly the batch at %d", offset).isEqualTo(b.size());
                assertThat(shipped.getLong(0)).isEqualTo(b.baseOffset());
                offset = b.baseOffset() + b.count();
            }
            assertThat(offset).isEqualTo(RECORDS);
            // maxBytes of two batches and a bit: whole batches while they fit, never a part of one
            if (batches.size() >= 3) {
                int budget = batches.get(0).size() + batches.get(1).size() + batches.get(2).size() - 1;
                ByteBuf shipped = batchBytes(fetch(raw, Fetch.VERSION_BATCHES, 0, budget));
                assertThat(shipped.readableBytes()).isEqualTo(batches.get(0).size() + batches.get(1).size());
            }
        }
        ConsumerConfig config = ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).maxPollBytes(1).build();
        try (Consumer consumer = new RemoteConsumer(broker.bootstrap(), config)) {
            consumer.assign(Set.of(TP));
            List<ConsumerRecord> read = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (read.size() < RECORDS && System.nanoTime() < deadline) {
                read.addAll(consumer.poll(Duration.ofMillis(100)));
            }
            assertThat(read).hasSize(RECORDS);
            for (int i = 0; i < RECORDS; i++) {
                assertRecord(read.get(i), i);
            }
        }
    }

    @Test
    void aFlippedByteInAJournalFileReachesANetworkConsumerAsCorruptRecordNamingPartitionAndOffset() throws Exception {
        broker = TestBroker.start(dir);
        produce();
        List<Batch> batches = storedBatches();
        long victim = RECORDS / 2;
        Batch damaged = batches.stream().filter(b -> b.holds(victim)).findFirst().orElseThrow();
        broker.close();
        broker = null;
        flipByteOf(("value-" + victim + "-").getBytes(StandardCharsets.UTF_8));
        broker = TestBroker.start(dir);

        ConsumerConfig config = ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).maxPollRecords(RECORDS).build();
        List<ConsumerRecord> read = new ArrayList<>();
        try (Consumer consumer = new RemoteConsumer(broker.bootstrap(), config)) {
            consumer.assign(Set.of(TP));
            assertThatThrownBy(() -> {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (System.nanoTime() < deadline) {
                    read.addAll(consumer.poll(Duration.ofMillis(100)));
                }
            }).isInstanceOfSatisfying(SluiceException.CorruptRecordException.class, e -> {
                assertThat(e.code()).isEqualTo(SluiceException.Code.CORRUPT_RECORD);
                assertThat(e.partition()).isEqualTo(TP);
                assertThat(e.offset()).isEqualTo(damaged.baseOffset());
                assertThat(e.getMessage()).contains(TP.toString(), "offset " + damaged.baseOffset(), "CRC32C");
            });
            assertThat(read).as("every record before the damaged batch, nothing of it").hasSize((int) damaged.baseOffset());
            for (int i = 0; i < read.size(); i++) {
                assertRecord(read.get(i), i);
            }
            // a later start inside the damaged batch names that offset; one after it reads on
            consumer.seek(TP, victim);
            assertThatThrownBy(() -> consumer.poll(Duration.ofSeconds(5)))
                    .isInstanceOfSatisfying(SluiceException.CorruptRecordException.class,
                            e -> assertThat(e.getMessage()).contains(TP.toString(), "offset " + victim));
            long after = damaged.baseOffset() + damaged.count();
            consumer.seek(TP, after);
            List<ConsumerRecord> rest = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (rest.size() < RECORDS - after && System.nanoTime() < deadline) {
                rest.addAll(consumer.poll(Duration.ofMillis(100)));
            }
            assertThat(rest).hasSize((int) (RECORDS - after));
            assertRecord(rest.get(0), after);
        }
    }

    @Test
    void aBatchWhoseFramingIsDamagedIsReportedByTheBrokerAsCorruptRecordNamingPartitionAndOffset() throws Exception {
        broker = TestBroker.start(dir);
        produce();
        List<Batch> batches = storedBatches();
        assertThat(batches).hasSizeGreaterThanOrEqualTo(3);
        Batch damaged = batches.get(batches.size() / 2);
        broker.close();
        broker = null;
        // the batch's header as stored: base offset, batch length, partition leader epoch -1, magic 2
        byte[] header = Unpooled.buffer().writeLong(damaged.baseOffset()).writeInt(damaged.size() - 12).writeInt(-1)
                .writeByte(2).array();
        flipByteAt(Arrays.copyOf(header, 17), 16); // magic 2 -> 3: the broker cannot walk past it
        broker = TestBroker.start(dir);

        try (RawClient raw = new RawClient(broker.bootstrap())) {
            ByteBuf body = fetch(raw, Fetch.VERSION_BATCHES, damaged.baseOffset() + damaged.count() - 1, 1 << 20);
            Fetch.PartitionData p = Fetch.Response.decodeBatches(body, new Fetch.Request(0, 1 << 20,
                    List.of(new Fetch.PartitionRequest(TP, damaged.baseOffset() + damaged.count() - 1, 1 << 20)))).partitions().get(0);
            assertThat(p.error()).isEqualTo(SluiceException.Code.CORRUPT_RECORD);
            assertThat(p.errorMessage()).contains(TP.toString(), "offset " + (damaged.baseOffset() + damaged.count() - 1), "magic");
        }
        ConsumerConfig config = ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).maxPollRecords(RECORDS).build();
        List<ConsumerRecord> read = new ArrayList<>();
        try (Consumer consumer = new RemoteConsumer(broker.bootstrap(), config)) {
            consumer.assign(Set.of(TP));
            assertThatThrownBy(() -> {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (System.nanoTime() < deadline) {
                    read.addAll(consumer.poll(Duration.ofMillis(100)));
                }
            }).isInstanceOfSatisfying(SluiceException.CorruptRecordException.class, e -> {
                assertThat(e.partition()).isEqualTo(TP);
                assertThat(e.offset()).isEqualTo(damaged.baseOffset());
                assertThat(e.getMessage()).contains(TP.toString(), "offset " + damaged.baseOffset());
            });
            assertThat(read).as("every record before the damaged batch").hasSize((int) damaged.baseOffset());
        }
    }

    @Test
    void theRemovedRecordByRecordVersionZeroAndAnUnknownVersionAreRefused() throws Exception {
        broker = TestBroker.start(dir);
        produce();
        try (RawClient raw = new RawClient(broker.bootstrap())) {
            for (short version : new short[] {0, 2}) {
                assertThatThrownBy(() -> fetch(raw, version, 0, 1 << 20))
                        .isInstanceOfSatisfying(SluiceException.class,
                                e -> assertThat(e.code()).isEqualTo(SluiceException.Code.UNSUPPORTED_VERSION));
            }
            assertThat(batchBytes(fetch(raw, Fetch.VERSION_BATCHES, 7, 1 << 20)).readableBytes())
                    .as("the connection still serves version 1").isPositive();
        }
    }

    /** The batch bytes of the only partition of a v1 response body. */
    private static ByteBuf batchBytes(ByteBuf body) {
        assertThat(body.readInt()).isEqualTo(1);
        assertThat(Wire.readString(body)).isEqualTo(TOPIC);
        assertThat(body.readInt()).isZero();
        assertThat(body.readShort()).isEqualTo(SluiceException.Code.NONE.id);
        assertThat(Wire.readString(body)).isNull();
        body.readLong(); // start offset
        assertThat(body.readLong()).isEqualTo(RECORDS);
        int size = body.readInt();
        assertThat(size).isEqualTo(body.readableBytes());
        return body.readSlice(size);
    }

    private void flipByteOf(byte[] needle) throws IOException {
        flipByteAt(needle, 2);
    }

    /** Flips the low bit of byte {@code at} of the first occurrence of {@code needle} in a journal file. */
    private void flipByteAt(byte[] needle, int at) throws IOException {
        List<Path> files;
        try (Stream<Path> walk = Files.walk(dir)) {
            files = walk.filter(p -> p.toString().endsWith(".cq4")).toList();
        }
        for (Path file : files) {
            try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
                byte[] head = new byte[(int) Math.min(raf.length(), 4 << 20)];
                raf.readFully(head);
                int found = indexOf(head, needle);
                if (found >= 0) {
                    raf.seek(found + at);
                    raf.write(head[found + at] ^ 0x01);
                    return;
                }
            }
        }
        throw new AssertionError("no journal file holds " + new String(needle, StandardCharsets.UTF_8));
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** The response body of a raw fetch of {@link #TP} from {@code offset} at {@code version}. */
    private static ByteBuf fetch(RawClient raw, short version, long offset, int maxBytes) throws IOException {
        return raw.call(ApiKey.FETCH, version,
                frame -> new Fetch.Request(0, maxBytes, List.of(new Fetch.PartitionRequest(TP, offset, maxBytes))).encode(frame));
    }
}
