package io.sluice.records;

import io.sluice.core.Header;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * What a broker accepts from a producer: what {@link RecordBatchWriter} writes is byte for byte the reference layout
 * ({@link ReferenceBatches}) and passes {@link RecordBatchChecker#checkProduced}; every damage the broker must not
 * store is refused with a message that says what is wrong, before anything is written.
 */
class RecordBatchCheckerTest {
    private static final int MAX_EVENT_SIZE = 1 << 20;

    /** The records {@link ReferenceBatches#batch} encodes for offsets {@code base..base+count-1}. */
    private static List<ProducerRecord> records(long base, int count) {
        List<ProducerRecord> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            long n = base + i;
            out.add(new ProducerRecord("t", 0, ReferenceBatches.key(n), ReferenceBatches.value(n),
                    ReferenceBatches.headers(n), ReferenceBatches.timestamp(n)));
        }
        return out;
    }

    /** A producer's batch: base offset 0, the broker assigns it. */
    static byte[] write(List<ProducerRecord> records) {
        ByteBuffer b = ByteBuffer.allocate(1 << 20);
        RecordBatchWriter w = new RecordBatchWriter();
        w.begin(b, 0);
        for (ProducerRecord r : records) {
            w.append(r.timestamp(), r.key(), r.key() == null ? -1 : r.key().length, r.value(), r.value().length, r.headers());
        }
        return Arrays.copyOf(b.array(), w.finish(0));
    }

    private static CheckedBatch check(byte[] batch, int maxEventSize) {
        return new RecordBatchChecker().checkProduced(ByteBuffer.wrap(batch), 0, batch.length, maxEventSize);
    }

    private static int check(byte[] batch) {
        return check(batch, MAX_EVENT_SIZE).recordCount();
    }

    @Test
    void theWriterProducesTheReferenceBytesAndTheBrokerAcceptsThem() {
        for (int count : new int[] {1, 2, 7, 300}) {
            byte[] written = write(records(40, count));
            byte[] reference = ReferenceBatches.batch(40, count);
            ByteBuffer.wrap(reference).putLong(0, 0); // the client leaves the base offset to the broker
            assertThat(written).as("%d records", count).isEqualTo(reference);
            assertThat(check(written)).isEqualTo(count);
        }
    }

    @Test
    void aCheckedBatchNamesItsBytesAndCopiesThemStillChecked() {
        byte[] batch = write(records(0, 3));
        ByteBuffer frame = ByteBuffer.allocateDirect(batch.length + 9);
        frame.put(9, batch);
        CheckedBatch checked = new RecordBatchChecker().checkProduced(frame, 9, batch.length, MAX_EVENT_SIZE);
        assertThat(checked.offset()).isEqualTo(9);
        assertThat(checked.length()).isEqualTo(batch.length);
        assertThat(checked.recordCount()).isEqualTo(3);
        CheckedBatch copy = checked.copy();
        byte[] copied = new byte[copy.length()];
        copy.copyTo(copied, 0);
        assertThat(copied).isEqualTo(batch);
        assertThat(copy.recordCount()).isEqualTo(3);
    }

    @Test
    void everyFlippedBitTheBrokerWouldStoreIsRefused() {
        byte[] good = write(records(0, 4));
        for (int at = 0; at < good.length; at++) {
            boolean outsideCrc = at < RecordBatch.BATCH_LENGTH_OFFSET // base offset: the broker rewrites it
                    || (at >= 12 && at < RecordBatch.MAGIC_OFFSET);    // partition leader epoch: unused
            for (int bit = 0; bit < 8; bit++) {
                byte[] bad = good.clone();
                bad[at] ^= (byte) (1 << bit);
                try {
                    check(bad);
                    if (!outsideCrc) {
                        fail("a flip of bit " + bit + " at byte " + at + " was accepted");
                    }
                } catch (MalformedBatchException e) {
                    assertThat(outsideCrc).as("byte %d refused: %s", at, e.getMessage()).isFalse();
                    assertThat(e.getMessage()).isNotBlank();
                }
            }
        }
    }

    @Test
    void whatSluiceDoesNotStoreIsRefusedByName() {
        byte[] compressed = write(records(0, 2));
        compressed[RecordBatch.ATTRIBUTES_OFFSET + 1] = 1; // gzip
        assertThatThrownBy(() -> check(ReferenceBatches.recrc(compressed))).isInstanceOf(MalformedBatchException.class)
                .hasMessageContaining("attributes 1").hasMessageContaining("uncompressed");

        byte[] idempotent = write(records(0, 2));
        ByteBuffer.wrap(idempotent).putLong(RecordBatch.PRODUCER_ID_OFFSET, 7);
        assertThatThrownBy(() -> check(ReferenceBatches.recrc(idempotent))).isInstanceOf(MalformedBatchException.class)
                .hasMessageContaining("non-idempotent");

        assertThat(RecordBatchChecker.forIdempotentProducers().checkProduced(ByteBuffer.wrap(idempotent), 0,
                idempotent.length, MAX_EVENT_SIZE).recordCount()).as("a Kafka front's idempotent producer").isEqualTo(2);
        byte[] idempotentGzip = compressed.clone();
        assertThatThrownBy(() -> RecordBatchChecker.forIdempotentProducers().checkProduced(ByteBuffer.wrap(idempotentGzip), 0,
                idempotentGzip.length, MAX_EVENT_SIZE)).isInstanceOf(MalformedBatchException.class).hasMessageContaining("attributes 1");

        byte[] wrongMax = write(records(0, 3));
        ByteBuffer.wrap(wrongMax).putLong(RecordBatch.MAX_TIMESTAMP_OFFSET, 1);
        assertThatThrownBy(() -> check(ReferenceBatches.recrc(wrongMax))).isInstanceOf(MalformedBatchException.class)
                .hasMessageContaining("max timestamp 1 but its records' largest is 5002");

        byte[] one = write(records(0, 2));
        byte[] two = ReferenceBatches.concat(one, one);
        assertThatThrownBy(() -> check(two)).isInstanceOf(MalformedBatchException.class)
                .hasMessageContaining("one batch per request");

        byte[] empty = write(records(0, 1));
        ByteBuffer e = ByteBuffer.wrap(empty);
        e.putInt(RecordBatch.RECORDS_COUNT_OFFSET, 0);
        e.putInt(RecordBatch.LAST_OFFSET_DELTA_OFFSET, -1);
        byte[] noRecords = Arrays.copyOf(empty, RecordBatch.HEADER_SIZE);
        ByteBuffer.wrap(noRecords).putInt(RecordBatch.BATCH_LENGTH_OFFSET, RecordBatch.HEADER_SIZE - RecordBatch.LOG_OVERHEAD);
        assertThatThrownBy(() -> check(ReferenceBatches.recrc(noRecords))).isInstanceOf(MalformedBatchException.class)
                .hasMessageContaining("0 records");
    }

    @Test
    void aRecordWithoutAValueOrWithTheWrongOffsetDeltaIsRefused() {
        // record: length | attributes | timestampDelta | offsetDelta | keyLength | valueLength | headerCount
        byte[] batch = write(List.of(new ProducerRecord("t", 0, null, new byte[0], List.of(), 9L)));
        int record = RecordBatch.HEADER_SIZE;
        assertThat(Arrays.copyOfRange(batch, record, batch.length)).containsExactly((byte) 12, (byte) 0, (byte) 0, (byte) 0, (byte) 1, (byte) 0, (byte) 0);

        byte[] nullValue = batch.clone();
        nullValue[record + 5] = 1; // zig-zag -1
        assertThatThrownBy(() -> check(ReferenceBatches.recrc(nullValue))).isInstanceOf(MalformedBatchException.class)
                .hasMessageContaining("null value");

        byte[] wrongDelta = batch.clone();
        wrongDelta[record + 3] = 2; // offset delta 1 for the first record
        assertThatThrownBy(() -> check(ReferenceBatches.recrc(wrongDelta))).isInstanceOf(MalformedBatchException.class)
                .hasMessageContaining("offset delta 1");

        byte[] attributes = batch.clone();
        attributes[record + 1] = 4;
        assertThatThrownBy(() -> check(ReferenceBatches.recrc(attributes))).isInstanceOf(MalformedBatchException.class)
                .hasMessageContaining("record 0 has attributes 4");
    }

    @Test
    void aRecordAboveMaxEventSizeFailsTheWholeBatchWithRecordTooLarge() {
        List<ProducerRecord> records = List.of(
                new ProducerRecord("t", 0, null, new byte[10], List.of(), 1L),
                new ProducerRecord("t", 0, "k".getBytes(StandardCharsets.UTF_8), new byte[1000], List.of(Header.of("h", "v")), 1L));
        byte[] batch = write(records);
        // ProducerRecord.serializedSize(): 26 + key + value + (6 + key + value) per header
        assertThat(records.get(1).serializedSize()).isEqualTo(26 + 1 + 1000 + 6 + 1 + 1);
        assertThat(check(batch, 1035).recordCount()).isEqualTo(2);
        assertThatThrownBy(() -> check(batch, 1034))
                .isInstanceOf(SluiceException.RecordTooLargeException.class)
                .hasMessageContaining("record 1 of 1035 bytes exceeds maxEventSize=1034");
    }
    @Test
    void theCheckerForAFrontThatVerifiedTheCrcSkipsOnlyTheCrc() {
        byte[] flipped = write(records(0, 2));
        flipped[RecordBatch.PRODUCER_ID_OFFSET + 7] ^= 1; // inside the CRC's range: CRC now wrong, framing and rules sound
        assertThatThrownBy(() -> RecordBatchChecker.forIdempotentProducers().checkProduced(ByteBuffer.wrap(flipped), 0,
                flipped.length, MAX_EVENT_SIZE)).isInstanceOf(MalformedBatchException.class).hasMessageContaining("CRC32C mismatch");
        assertThat(RecordBatchChecker.forIdempotentProducersWithVerifiedCrc().checkProduced(ByteBuffer.wrap(flipped), 0,
                flipped.length, MAX_EVENT_SIZE).recordCount()).as("the CRC is the caller's: not computed again").isEqualTo(2);

        byte[] shortened = write(records(0, 2));
        ByteBuffer.wrap(shortened).putInt(RecordBatch.BATCH_LENGTH_OFFSET, shortened.length); // claims 12 bytes more than there are
        assertThatThrownBy(() -> RecordBatchChecker.forIdempotentProducersWithVerifiedCrc().checkProduced(
                ByteBuffer.wrap(shortened), 0, shortened.length, MAX_EVENT_SIZE)).isInstanceOf(MalformedBatchException.class);
    }
}
