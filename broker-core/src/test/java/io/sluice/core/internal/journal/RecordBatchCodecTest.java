package io.sluice.core.internal.journal;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.Header;
import net.openhft.chronicle.bytes.Bytes;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The journal's batch format is Kafka's RecordBatch v2, checked against Kafka's own implementation (kafka-clients,
 * test scope): the writer produces the bytes Kafka produces for the same records, and each side reads the other's.
 */
class RecordBatchCodecTest {
    private final Bytes<?> bytes = Bytes.allocateElasticDirect(1 << 16);

    @AfterEach
    void release() {
        bytes.releaseLast();
    }

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

    private void writeOurs(long baseOffset, List<Event> events) {
        RecordBatchCodec.Writer writer = new RecordBatchCodec.Writer();
        writer.begin(bytes);
        for (Event e : events) {
            writer.append(e.timestamp(), e.key(), e.key() == null ? -1 : e.key().length, e.value(), e.value().length,
                    e.headers());
        }
        writer.finish(baseOffset);
    }

    private byte[] ours() {
        byte[] out = new byte[(int) bytes.readRemaining()];
        bytes.read(bytes.readPosition(), out, 0, out.length);
        return out;
    }

    private static MemoryRecords kafkas(long baseOffset, List<Event> events) {
        SimpleRecord[] records = new SimpleRecord[events.size()];
        for (int i = 0; i < records.length; i++) {
            Event e = events.get(i);
            org.apache.kafka.common.header.Header[] headers = e.headers().stream()
                    .map(h -> new RecordHeader(h.key(), h.value())).toArray(org.apache.kafka.common.header.Header[]::new);
            records[i] = new SimpleRecord(e.timestamp(), e.key(), e.value(), headers);
        }
        return MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V2, baseOffset, Compression.NONE,
                TimestampType.CREATE_TIME, records);
    }

    @Test
    void writesTheSameBytesAsKafkaForTheSameRecords() {
        writeOurs(4242, events());
        ByteBuffer expected = kafkas(4242, events()).buffer();
        byte[] kafka = new byte[expected.remaining()];
        expected.get(kafka);
        assertThat(ours()).isEqualTo(kafka);
    }

    @Test
    void kafkaValidatesAndReadsWhatTheWriterProduces() {
        writeOurs(77, events());
        MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(ours()));
        List<MutableRecordBatch> batches = new ArrayList<>();
        records.batches().forEach(batches::add);
        assertThat(batches).hasSize(1);
        MutableRecordBatch batch = batches.get(0);
        batch.ensureValid(); // CRC32C and sizes
        assertThat(batch.magic()).isEqualTo(RecordBatch.MAGIC_VALUE_V2);
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
    void theCursorReadsWhatKafkaWritesAndSkipsToAnyOffset() {
        ByteBuffer kafka = kafkas(1000, events()).buffer();
        byte[] raw = new byte[kafka.remaining()];
        kafka.get(raw);
        bytes.write(raw);
        List<Event> events = events();
        for (int from = 0; from < events.size(); from++) {
            RecordBatchCodec.Cursor cursor = new RecordBatchCodec.Cursor();
            assertThat(cursor.open(bytes, bytes.readPosition(), bytes.readRemaining(), true)).isNull();
            assertThat(cursor.baseOffset()).isEqualTo(1000);
            assertThat(cursor.recordCount()).isEqualTo(events.size());
            while (cursor.peekOffset() < 1000 + from) {
                cursor.skip();
            }
            for (int i = from; i < events.size(); i++) {
                ConsumerRecord r = cursor.next("t", 3);
                Event e = events.get(i);
                assertThat(r.offset()).isEqualTo(1000 + i);
                assertThat(r.timestamp()).isEqualTo(e.timestamp());
                assertThat(r.key()).isEqualTo(e.key());
                assertThat(r.value()).isEqualTo(e.value());
                assertThat(r.headers()).isEqualTo(e.headers());
            }
            assertThat(cursor.hasNext()).isFalse();
        }
    }

    @Test
    void rewritingTheBaseOffsetKeepsTheCrcValid() {
        writeOurs(0, events());
        RecordBatchCodec.rewriteBaseOffset(bytes, bytes.readPosition(), 1_000_000);
        RecordBatchCodec.Cursor cursor = new RecordBatchCodec.Cursor();
        assertThat(cursor.open(bytes, bytes.readPosition(), bytes.readRemaining(), true)).isNull();
        assertThat(cursor.next("t", 0).offset()).isEqualTo(1_000_000);
        MemoryRecords.readableRecords(ByteBuffer.wrap(ours())).batches().forEach(MutableRecordBatch::ensureValid);
    }

    @Test
    void aFlippedByteFailsTheCrc() {
        writeOurs(0, events());
        long at = bytes.readPosition() + RecordBatchCodec.HEADER_SIZE + 10;
        bytes.writeByte(at, (byte) (bytes.readByte(at) ^ 0x40));
        RecordBatchCodec.Cursor cursor = new RecordBatchCodec.Cursor();
        assertThat(cursor.open(bytes, bytes.readPosition(), bytes.readRemaining(), true)).contains("CRC32C mismatch");
        assertThat(cursor.hasNext()).isFalse();
    }

    @Test
    void aRecordThatCannotBeEncodedLeavesTheBatchAsItWas() {
        RecordBatchCodec.Writer writer = new RecordBatchCodec.Writer();
        writer.begin(bytes);
        writer.append(1L, null, -1, new byte[]{1}, 1, List.of());
        long size = writer.size();
        assertThatThrownBy(() -> writer.append(2L, null, -1, new byte[]{2}, 1, null))
                .isInstanceOf(NullPointerException.class);
        assertThat(writer.size()).isEqualTo(size);
        assertThat(writer.count()).isEqualTo(1);
        writer.append(3L, null, -1, new byte[]{3}, 1, List.of());
        writer.finish(10);
        RecordBatchCodec.Cursor cursor = new RecordBatchCodec.Cursor();
        assertThat(cursor.open(bytes, bytes.readPosition(), bytes.readRemaining(), true)).isNull();
        assertThat(cursor.next("t", 0).value()).containsExactly(1);
        ConsumerRecord second = cursor.next("t", 0);
        assertThat(second.offset()).isEqualTo(11);
        assertThat(second.value()).containsExactly(3);
    }
}
