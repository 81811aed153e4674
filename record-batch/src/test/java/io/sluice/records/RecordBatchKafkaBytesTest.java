package io.sluice.records;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.Header;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The batch format is Kafka's RecordBatch v2, checked against Kafka's own implementation (kafka-clients, test scope):
 * the writer produces the bytes Kafka produces for the same records, and each side reads the other's. Heap and direct
 * buffers, at an offset inside them.
 */
class RecordBatchKafkaBytesTest {
    private static final int AT = 17;

    private record Event(long timestamp, byte[] key, byte[] value, List<Header> headers) {
    }

    private static List<Event> events() {
        List<Event> events = new ArrayList<>();
        events.add(new Event(1_700_000_000_000L, null, "first".getBytes(StandardCharsets.UTF_8), List.of()));
        events.add(new Event(1_700_000_000_005L, "k1".getBytes(StandardCharsets.UTF_8), new byte[300],
                List.of(Header.of("trace", "abc"), Header.of("ünïcødé-😀", "v"))));
        events.add(new Event(1_699_999_999_990L, new byte[0], new byte[0], List.of(new Header("empty", new byte[0]))));
        byte[] big = new byte[20_000];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) i;
        }
        events.add(new Event(1_700_000_100_000L, "k4".getBytes(StandardCharsets.UTF_8), big, List.of()));
        return events;
    }

    private static ByteBuffer buffer(boolean direct) {
        return direct ? ByteBuffer.allocateDirect(1 << 16) : ByteBuffer.allocate(1 << 16);
    }

    /** Writes the events at {@link #AT}; returns the batch's bytes. */
    private static byte[] ours(ByteBuffer out, long baseOffset, List<Event> events) {
        RecordBatchWriter writer = new RecordBatchWriter();
        writer.begin(out, AT);
        for (Event e : events) {
            writer.append(e.timestamp(), e.key(), e.key() == null ? -1 : e.key().length, e.value(), e.value().length,
                    e.headers());
        }
        int size = writer.finish(baseOffset);
        byte[] bytes = new byte[size];
        out.get(AT, bytes);
        return bytes;
    }

    private static MemoryRecords kafkas(long baseOffset, List<Event> events) {
        SimpleRecord[] records = new SimpleRecord[events.size()];
        for (int i = 0; i < records.length; i++) {
            Event e = events.get(i);
            org.apache.kafka.common.header.Header[] headers = e.headers().stream()
                    .map(h -> new RecordHeader(h.key(), h.value())).toArray(org.apache.kafka.common.header.Header[]::new);
            records[i] = new SimpleRecord(e.timestamp(), e.key(), e.value(), headers);
        }
        return MemoryRecords.withRecords(org.apache.kafka.common.record.RecordBatch.MAGIC_VALUE_V2, baseOffset,
                Compression.NONE, TimestampType.CREATE_TIME, records);
    }

    private static byte[] kafkaBytes(long baseOffset, List<Event> events) {
        ByteBuffer expected = kafkas(baseOffset, events).buffer();
        byte[] kafka = new byte[expected.remaining()];
        expected.get(kafka);
        return kafka;
    }

    @Test
    void writesTheSameBytesAsKafkaForTheSameRecords() {
        for (boolean direct : new boolean[] {false, true}) {
            assertThat(ours(buffer(direct), 4242, events())).isEqualTo(kafkaBytes(4242, events()));
        }
    }

    @Test
    void kafkaValidatesAndReadsWhatTheWriterProduces() {
        MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(ours(buffer(true), 77, events())));
        List<MutableRecordBatch> batches = new ArrayList<>();
        records.batches().forEach(batches::add);
        assertThat(batches).hasSize(1);
        MutableRecordBatch batch = batches.get(0);
        batch.ensureValid(); // CRC32C and sizes
        assertThat(batch.magic()).isEqualTo(org.apache.kafka.common.record.RecordBatch.MAGIC_VALUE_V2);
        assertThat(batch.baseOffset()).isEqualTo(77);
        assertThat(batch.lastOffset()).isEqualTo(80);
        assertThat(batch.maxTimestamp()).isEqualTo(1_700_000_100_000L);
        List<Event> events = events();
        int i = 0;
        for (Record r : batch) {
            Event e = events.get(i);
            assertThat(r.offset()).isEqualTo(77 + i);
            assertThat(r.timestamp()).isEqualTo(e.timestamp());
            assertThat(r.hasKey()).isEqualTo(e.key() != null);
            assertThat(r.headers()).hasSize(e.headers().size());
            for (int h = 0; h < e.headers().size(); h++) {
                assertThat(r.headers()[h].key()).isEqualTo(e.headers().get(h).key());
                assertThat(r.headers()[h].value()).isEqualTo(e.headers().get(h).value());
            }
            byte[] value = new byte[r.valueSize()];
            r.value().get(value);
            assertThat(value).isEqualTo(e.value());
            i++;
        }
        assertThat(i).isEqualTo(events.size());
    }

    @Test
    void theReaderReadsWhatKafkaWritesAndSkipsToAnyOffset() {
        byte[] raw = kafkaBytes(1000, events());
        for (boolean direct : new boolean[] {false, true}) {
            ByteBuffer in = buffer(direct);
            in.put(AT, raw);
            List<Event> events = events();
            for (int from = 0; from < events.size(); from++) {
                RecordBatchReader reader = new RecordBatchReader();
                RecordBatch header = reader.open(in, AT, raw.length, true);
                assertThat(header.baseOffset()).isEqualTo(1000);
                assertThat(header.count()).isEqualTo(events.size());
                assertThat(header.maxTimestamp()).isEqualTo(1_700_000_100_000L);
                while (reader.peekOffset() < 1000 + from) {
                    reader.skip();
                }
                for (int i = from; i < events.size(); i++) {
                    ConsumerRecord r = reader.next("t", 3);
                    Event e = events.get(i);
                    assertThat(r.offset()).isEqualTo(1000 + i);
                    assertThat(r.timestamp()).isEqualTo(e.timestamp());
                    assertThat(r.key()).isEqualTo(e.key());
                    assertThat(r.value()).isEqualTo(e.value());
                    assertThat(r.headers()).isEqualTo(e.headers());
                }
                assertThat(reader.hasNext()).isFalse();
            }
        }
    }

    @Test
    void rewritingTheBaseOffsetKeepsTheCrcValid() {
        ByteBuffer out = buffer(false);
        byte[] bytes = ours(out, 0, events());
        new RecordBatch().wrap(out, AT, bytes.length).baseOffset(1_000_000);
        RecordBatchReader reader = new RecordBatchReader();
        reader.open(out, AT, bytes.length, true);
        assertThat(reader.next("t", 0).offset()).isEqualTo(1_000_000);
        MemoryRecords.readableRecords(ByteBuffer.wrap(ours(out, 1_000_000, events()))).batches()
                .forEach(MutableRecordBatch::ensureValid);
    }

    @Test
    void aFlippedByteFailsTheCrc() {
        ByteBuffer out = buffer(true);
        byte[] bytes = ours(out, 0, events());
        int at = AT + RecordBatch.HEADER_SIZE + 10;
        out.put(at, (byte) (out.get(at) ^ 0x40));
        RecordBatchReader reader = new RecordBatchReader();
        assertThatThrownBy(() -> reader.open(out, AT, bytes.length, true)).isInstanceOf(MalformedBatchException.class)
                .hasMessageContaining("CRC32C mismatch");
        assertThat(reader.hasNext()).isFalse();
    }

    @Test
    void aRecordThatCannotBeEncodedLeavesTheBatchAsItWas() {
        ByteBuffer out = buffer(false).limit(AT + RecordBatch.HEADER_SIZE + 40);
        RecordBatchWriter writer = new RecordBatchWriter();
        writer.begin(out, AT);
        writer.append(1L, null, -1, new byte[]{1}, 1, List.of());
        int size = writer.size();
        assertThatThrownBy(() -> writer.append(2L, null, -1, new byte[]{2}, 1, null))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> writer.append(2L, null, -1, new byte[40], 40, List.of()))
                .isInstanceOf(BufferOverflowException.class);
        assertThat(writer.size()).isEqualTo(size);
        assertThat(writer.count()).isEqualTo(1);
        writer.append(3L, null, -1, new byte[]{3}, 1, List.of());
        int length = writer.finish(10);
        RecordBatchReader reader = new RecordBatchReader();
        reader.open(out, AT, length, true);
        assertThat(reader.next("t", 0).value()).containsExactly(1);
        ConsumerRecord second = reader.next("t", 0);
        assertThat(second.offset()).isEqualTo(11);
        assertThat(second.value()).containsExactly(3);
    }

    @Test
    void maxRecordSizeBoundsWhatARecordAdds() {
        RecordBatchWriter writer = new RecordBatchWriter();
        writer.begin(buffer(false), 0);
        for (Event e : events()) {
            int before = writer.size();
            int keyLength = e.key() == null ? -1 : e.key().length;
            writer.append(e.timestamp(), e.key(), keyLength, e.value(), e.value().length, e.headers());
            assertThat(writer.size() - before).isLessThanOrEqualTo(
                    RecordBatchWriter.maxRecordSize(keyLength, e.value().length, e.headers()));
        }
    }
}
