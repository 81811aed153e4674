package io.sluice.core;

import io.sluice.core.internal.BrokerFront;
import io.sluice.records.RecordBatchChecker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link PartitionReader#readViews}: the same records as {@link PartitionReader#read}, in the same order and within
 * the same bounds, from any position, out of single events and producer batches alike, through one reused view; and
 * a sink that throws leaves the reader on the record it threw on.
 */
class ReadViewsTest {
    @TempDir
    Path dir;
    private Broker broker;
    private final TopicPartition tp = new TopicPartition("t", 0);

    @AfterEach
    void close() {
        if (broker != null) {
            broker.close();
        }
    }

    /** What a record is, copied out of either form. */
    private record Seen(long offset, long timestamp, String key, String value, List<Header> headers) {
        static Seen of(ConsumerRecord r) {
            return new Seen(r.offset(), r.timestamp(), r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8),
                    new String(r.value(), StandardCharsets.UTF_8), r.headers());
        }

        static Seen of(EventView v) {
            return new Seen(v.offset(), v.timestamp(),
                    v.keyBuffer() == null ? null : new String(v.keyBuffer(), 0, v.keyLength(), StandardCharsets.UTF_8),
                    new String(v.valueBuffer(), 0, v.valueLength(), StandardCharsets.UTF_8), v.headers());
        }
    }

    /** 0..9 single events (a 10 KiB value at 3, so the view's buffer grows, then shorter values), 10..19 one batch, 20..24 singles. */
    private long write() throws Exception {
        broker = Broker.open(BrokerConfig.builder(dir).build());
        broker.createTopic(TopicConfig.of("t", 1));
        try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 10; i++) {
                String value = i == 3 ? "x".repeat(10_240) : "single-" + i;
                byte[] key = i % 3 == 0 ? null : ("key-" + i).getBytes(StandardCharsets.UTF_8);
                List<Header> headers = i % 2 == 0 ? List.of() : List.of(Header.of("h" + i, "v" + i));
                producer.send(new ProducerRecord("t", 0, key, value.getBytes(StandardCharsets.UTF_8), headers, 5_000L + i)).get();
            }
            byte[] batch = BatchAppendTest.batch("b", 10);
            CompletableFuture<Long> base = new CompletableFuture<>();
            assertThat(BrokerFront.of(broker).tryAppendBatch(tp,
                    new RecordBatchChecker().checkProduced(ByteBuffer.wrap(batch), 0, batch.length, 1 << 20), Acks.JOURNAL,
                    (p, offset, error) -> base.complete(offset))).isEqualTo(Producer.ACCEPTED);
            assertThat(base.get(10, TimeUnit.SECONDS)).isEqualTo(10);
            for (int i = 20; i < 25; i++) {
                producer.send(ProducerRecord.of("t", ("single-" + i).getBytes(StandardCharsets.UTF_8))).get();
            }
        }
        return broker.endOffset(tp);
    }

    @Test
    void everyStartAndBoundGivesTheRecordsReadGivesThroughOneReusedView() throws Exception {
        long end = write();
        assertThat(end).isEqualTo(25);
        Map<EventView, Boolean> views = new IdentityHashMap<>();
        try (PartitionReader records = broker.openReader(tp);
             PartitionReader viewed = broker.openReader(tp)) {
            for (long start = 0; start < end; start++) {
                for (int[] bound : new int[][]{{1, 1 << 20}, {3, 1 << 20}, {1000, 20}, {1000, 1 << 20}}) {
                    records.seek(start);
                    viewed.seek(start);
                    List<Seen> expected = new ArrayList<>();
                    List<Seen> got = new ArrayList<>();
                    while (records.position() < end) {
                        int a = records.read(bound[0], bound[1], r -> expected.add(Seen.of(r)));
                        int b = viewed.readViews(bound[0], bound[1], v -> {
                            views.put(v, true);
                            got.add(Seen.of(v));
                        });
                        assertThat(b).as("records in one call from %d, bounds %s", start, Arrays.toString(bound)).isEqualTo(a);
                        assertThat(viewed.position()).isEqualTo(records.position());
                    }
                    assertThat(viewed.readViews(bound[0], bound[1], v -> got.add(Seen.of(v)))).isZero();
                    assertThat(got).isEqualTo(expected);
                    assertThat(got).extracting(Seen::offset).startsWith(start).doesNotHaveDuplicates().hasSize((int) (end - start));
                }
            }
        }
        assertThat(views).hasSize(1);
    }

    @Test
    void theBatchRecordsCarryTheirKeysHeadersAndTimestamps() throws Exception {
        write();
        List<Seen> got = new ArrayList<>();
        try (PartitionReader reader = broker.openReader(tp)) {
            reader.seek(11);
            reader.readViews(1, 1 << 20, v -> got.add(Seen.of(v)));
        }
        assertThat(got).containsExactly(new Seen(11, 1_001L, "k1", "b-1", List.of(Header.of("h", "v1"))));
    }

    @Test
    void aSinkThatThrowsLeavesTheReaderOnThatRecord() throws Exception {
        write();
        try (PartitionReader reader = broker.openReader(tp)) {
            reader.seek(12);
            List<Long> before = new ArrayList<>();
            assertThatThrownBy(() -> reader.readViews(100, 1 << 20, v -> {
                if (v.offset() == 15) {
                    throw new IllegalStateException("sink failed on 15");
                }
                before.add(v.offset());
            })).isInstanceOf(IllegalStateException.class).hasMessage("sink failed on 15");
            assertThat(before).containsExactly(12L, 13L, 14L);
            assertThat(reader.position()).isEqualTo(15);
            List<Long> after = new ArrayList<>();
            reader.readViews(3, 1 << 20, v -> after.add(v.offset()));
            assertThat(after).containsExactly(15L, 16L, 17L);
        }
    }
}
