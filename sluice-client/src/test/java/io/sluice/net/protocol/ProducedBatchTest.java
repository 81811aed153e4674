package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.core.Acks;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.Header;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * PRODUCE v1: what {@link RecordBatchWriter} writes is byte for byte the journal's layout (compared with the
 * independent encoder of {@link RecordBatchReaderTest}), reads back as the records sent, and passes the broker's
 * {@link RecordBatchReader#checkProduced}; every damage the broker must not store is refused with a message that
 * says what is wrong, before anything is written.
 */
class ProducedBatchTest {
    private static final int MAX_EVENT_SIZE = 1 << 20;

    /** The records {@link RecordBatchReaderTest#batch} encodes for offsets {@code base..base+count-1}. */
    private static List<ProducerRecord> records(long base, int count) {
        List<ProducerRecord> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            long n = base + i;
            byte[] key = n % 2 == 0 ? null : ("k" + n).getBytes(StandardCharsets.UTF_8);
            byte[] value = ("value-" + n + "-" + "y".repeat((int) (n % 7))).getBytes(StandardCharsets.UTF_8);
            List<Header> headers = n % 3 == 0 ? List.of(Header.of("é" + n, "h" + n)) : List.of();
            out.add(new ProducerRecord("t", 0, key, value, headers, 5_000 + n));
        }
        return out;
    }

    static byte[] write(List<ProducerRecord> records) {
        ByteBuf b = Unpooled.buffer();
        RecordBatchWriter w = new RecordBatchWriter();
        w.begin(b, records.get(0).timestamp());
        for (ProducerRecord r : records) {
            w.append(r.timestamp(), r.key(), r.value(), r.headers());
        }
        int size = w.finish();
        assertThat(size).isEqualTo(b.readableBytes());
        return Arrays.copyOf(b.array(), b.writerIndex());
    }

    /** A whole v1 request body for {@code records} (acks JOURNAL, topic "topic", partition 1). */
    static void request(ByteBuf out, List<ProducerRecord> records) {
        Produce.encodeBatch(out, Acks.JOURNAL, "topic", 1, b -> b.writeBytes(write(records)));
    }

    /** Recomputes the CRC32C of the batch at {@code start} in {@code in}, if its length field fits the buffer. */
    static void recrc(ByteBuf in, int start) {
        if (start + RecordBatchReader.HEADER_SIZE > in.writerIndex()) {
            return;
        }
        int end = start + RecordBatchReader.LOG_OVERHEAD + in.getInt(start + RecordBatchReader.BATCH_LENGTH_OFFSET);
        if (end < start + RecordBatchReader.HEADER_SIZE || end > in.writerIndex()) {
            return;
        }
        CRC32C crc = new CRC32C();
        crc.update(in.nioBuffer(start + RecordBatchReader.ATTRIBUTES_OFFSET, end - start - RecordBatchReader.ATTRIBUTES_OFFSET));
        in.setInt(start + RecordBatchReader.CRC_OFFSET, (int) crc.getValue());
    }

    private static byte[] recrc(byte[] batch) {
        recrc(Unpooled.wrappedBuffer(batch), 0);
        return batch;
    }

    private static int check(byte[] batch) {
        return new RecordBatchReader().checkProduced(Unpooled.wrappedBuffer(batch), 0, batch.length, MAX_EVENT_SIZE);
    }

    @Test
    void theWriterProducesTheJournalsBytesAndTheBrokerAcceptsThem() {
        for (int count : new int[] {1, 2, 7, 300}) {
            byte[] written = write(records(40, count));
            byte[] reference = RecordBatchReaderTest.batch(40, count);
            Unpooled.wrappedBuffer(reference).setLong(0, 0); // the client leaves the base offset to the broker
            assertThat(written).as("%d records", count).isEqualTo(reference);
            assertThat(check(written)).isEqualTo(count);
        }
    }

    @Test
    void recordsReadBackAsSentWithTheBaseOffsetTheBrokerAssigns() {
        List<ProducerRecord> sent = new ArrayList<>(records(0, 5));
        sent.add(new ProducerRecord("t", 0, new byte[0], new byte[0], List.of(new Header("", new byte[0])), 4_000L)); // earlier: negative delta
        sent.add(new ProducerRecord("t", 0, null, new byte[70_000], List.of(), Long.MAX_VALUE / 2));
        byte[] batch = write(sent);
        assertThat(check(batch)).isEqualTo(sent.size());
        Unpooled.wrappedBuffer(batch).setLong(0, 1_000); // what the journal does
        List<ConsumerRecord> read = new ArrayList<>();
        new RecordBatchReader().readAll(Unpooled.wrappedBuffer(batch), "t", 0, 0, read);
        assertThat(read).hasSize(sent.size());
        for (int i = 0; i < sent.size(); i++) {
            ProducerRecord s = sent.get(i);
            ConsumerRecord r = read.get(i);
            assertThat(r.offset()).isEqualTo(1_000 + i);
            assertThat(r.timestamp()).isEqualTo(s.timestamp());
            assertThat(r.key()).isEqualTo(s.key());
            assertThat(r.value()).isEqualTo(s.value());
            assertThat(r.headers()).isEqualTo(s.headers());
        }
    }

    @Test
    void everyFlippedBitTheBrokerWouldStoreIsRefused() {
        byte[] good = write(records(0, 4));
        for (int at = 0; at < good.length; at++) {
            boolean outsideCrc = at < RecordBatchReader.BATCH_LENGTH_OFFSET // base offset: the broker rewrites it
                    || (at >= 12 && at < RecordBatchReader.MAGIC_OFFSET);   // partition leader epoch: unused
            for (int bit = 0; bit < 8; bit++) {
                byte[] bad = good.clone();
                bad[at] ^= (byte) (1 << bit);
                try {
                    check(bad);
                    if (!outsideCrc) {
                        fail("a flip of bit " + bit + " at byte " + at + " was accepted");
                    }
                } catch (ProtocolException e) {
                    assertThat(outsideCrc).as("byte %d refused: %s", at, e.getMessage()).isFalse();
                    assertThat(e.getMessage()).startsWith("record batch");
                }
            }
        }
    }

    @Test
    void whatSluiceDoesNotStoreIsRefusedByName() {
        byte[] compressed = write(records(0, 2));
        compressed[RecordBatchReader.ATTRIBUTES_OFFSET + 1] = 1; // gzip
        assertThatThrownBy(() -> check(recrc(compressed))).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("attributes 1").hasMessageContaining("uncompressed");

        byte[] idempotent = write(records(0, 2));
        Unpooled.wrappedBuffer(idempotent).setLong(RecordBatchReader.PRODUCER_ID_OFFSET, 7);
        assertThatThrownBy(() -> check(recrc(idempotent))).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("non-idempotent");

        byte[] wrongMax = write(records(0, 3));
        Unpooled.wrappedBuffer(wrongMax).setLong(RecordBatchReader.MAX_TIMESTAMP_OFFSET, 1);
        assertThatThrownBy(() -> check(recrc(wrongMax))).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("max timestamp 1 but its records' largest is 5002");

        byte[] one = write(records(0, 2));
        byte[] two = new byte[one.length * 2];
        System.arraycopy(one, 0, two, 0, one.length);
        System.arraycopy(one, 0, two, one.length, one.length);
        assertThatThrownBy(() -> check(two)).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("one batch per request");

        byte[] empty = write(records(0, 1));
        ByteBuf e = Unpooled.wrappedBuffer(empty);
        e.setInt(RecordBatchReader.RECORDS_COUNT_OFFSET, 0);
        e.setInt(RecordBatchReader.LAST_OFFSET_DELTA_OFFSET, -1);
        byte[] noRecords = Arrays.copyOf(empty, RecordBatchReader.HEADER_SIZE);
        Unpooled.wrappedBuffer(noRecords).setInt(RecordBatchReader.BATCH_LENGTH_OFFSET,
                RecordBatchReader.HEADER_SIZE - RecordBatchReader.LOG_OVERHEAD);
        assertThatThrownBy(() -> check(recrc(noRecords))).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("0 records");
    }

    @Test
    void aRecordWithoutAValueOrWithTheWrongOffsetDeltaIsRefused() {
        // record: length | attributes | timestampDelta | offsetDelta | keyLength | valueLength | headerCount
        byte[] batch = write(List.of(new ProducerRecord("t", 0, null, new byte[0], List.of(), 9L)));
        int record = RecordBatchReader.HEADER_SIZE;
        assertThat(Arrays.copyOfRange(batch, record, batch.length)).containsExactly((byte) 12, (byte) 0, (byte) 0, (byte) 0, (byte) 1, (byte) 0, (byte) 0);

        byte[] nullValue = batch.clone();
        nullValue[record + 5] = 1; // zig-zag -1
        assertThatThrownBy(() -> check(recrc(nullValue))).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("value length -1");

        byte[] wrongDelta = batch.clone();
        wrongDelta[record + 3] = 2; // offset delta 1 for the first record
        assertThatThrownBy(() -> check(recrc(wrongDelta))).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("offset delta 1");
    }

    @Test
    void aRecordAboveMaxEventSizeFailsTheWholeBatchWithRecordTooLarge() {
        List<ProducerRecord> records = List.of(
                new ProducerRecord("t", 0, null, new byte[10], List.of(), 1L),
                new ProducerRecord("t", 0, "k".getBytes(StandardCharsets.UTF_8), new byte[1000], List.of(Header.of("h", "v")), 1L));
        byte[] batch = write(records);
        // ProducerRecord.serializedSize(): 26 + key + value + (6 + key + value) per header
        assertThat(records.get(1).serializedSize()).isEqualTo(26 + 1 + 1000 + 6 + 1 + 1);
        assertThat(new RecordBatchReader().checkProduced(Unpooled.wrappedBuffer(batch), 0, batch.length, 1035)).isEqualTo(2);
        assertThatThrownBy(() -> new RecordBatchReader().checkProduced(Unpooled.wrappedBuffer(batch), 0, batch.length, 1034))
                .isInstanceOf(SluiceException.RecordTooLargeException.class)
                .hasMessageContaining("record 1 of 1035 bytes exceeds maxEventSize=1034");
    }

    @Test
    void theRequestCarriesAcksTopicPartitionAndWhereTheBatchLies() {
        ByteBuf body = Unpooled.buffer();
        request(body, records(0, 3));
        Produce.BatchRequest r = Produce.BatchRequest.decode(body, new RecordBatchReader(), MAX_EVENT_SIZE);
        assertThat(r.acks()).isEqualTo(Acks.JOURNAL);
        assertThat(r.topic()).isEqualTo("topic");
        assertThat(r.partition()).isEqualTo(1);
        assertThat(r.recordCount()).isEqualTo(3);
        assertThat(r.batchStart()).isEqualTo(1 + 2 + 5 + 4 + 4);
        assertThat(r.batchLength()).isEqualTo(write(records(0, 3)).length);

        ByteBuf response = Unpooled.buffer();
        new Produce.BatchResponse(42).encode(response);
        assertThat(Produce.BatchResponse.decode(response).baseOffset()).isEqualTo(42);
    }
}
