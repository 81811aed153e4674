package io.sluice.records;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.TopicPartition;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.sluice.records.ReferenceBatches.batch;
import static io.sluice.records.ReferenceBatches.concat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * The reader over batches written independently of the codec ({@link ReferenceBatches}): records come back from any
 * starting offset, and every damage a CRC32C or the framing can see — any flipped bit the CRC covers, any truncation —
 * is a {@link MalformedBatchException} naming the batch's base offset, never another exception and never a read past
 * the region it was given (the region sits inside a larger buffer here, so a read past it would go unnoticed by the
 * buffer's own bounds).
 */
class RecordBatchReaderTest {
    private static final String TOPIC = "t";

    /** {@code bytes} in the middle of a larger buffer of 0xFF bytes (varint continuation bits set), heap or direct. */
    private static ByteBuffer inside(byte[] bytes, boolean direct) {
        ByteBuffer b = direct ? ByteBuffer.allocateDirect(bytes.length + 64) : ByteBuffer.allocate(bytes.length + 64);
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, (byte) 0xFF);
        }
        b.put(32, bytes);
        return b;
    }

    private static int readAll(byte[] bytes, boolean direct, long from, List<ConsumerRecord> out) {
        return new RecordBatchReader().readAll(inside(bytes, direct), 32, bytes.length, TOPIC, 3, from, out);
    }

    @Test
    void readsTheRecordsFromEveryOffsetInsideAndAcrossBatches() {
        byte[] bytes = concat(batch(10, 4), batch(14, 1), batch(15, 6));
        for (boolean direct : new boolean[] {false, true}) {
            for (long from = 0; from <= 21; from++) {
                List<ConsumerRecord> out = new ArrayList<>();
                int added = readAll(bytes, direct, from, out);
                long first = Math.max(from, 10);
                assertThat(added).isEqualTo(out.size()).isEqualTo((int) (21 - first));
                for (int i = 0; i < out.size(); i++) {
                    ConsumerRecord r = out.get(i);
                    long n = first + i;
                    assertThat(r.topicPartition()).isEqualTo(new TopicPartition(TOPIC, 3));
                    assertThat(r.offset()).isEqualTo(n);
                    assertThat(r.timestamp()).isEqualTo(ReferenceBatches.timestamp(n));
                    assertThat(r.key()).isEqualTo(ReferenceBatches.key(n));
                    assertThat(r.value()).isEqualTo(ReferenceBatches.value(n));
                    assertThat(r.headers()).isEqualTo(ReferenceBatches.headers(n));
                }
            }
        }
    }

    @Test
    void advanceDecodesInPlaceWhereKeyAndValueLie() {
        byte[] bytes = batch(7, 3);
        ByteBuffer in = inside(bytes, true);
        RecordBatchReader reader = new RecordBatchReader();
        RecordBatch header = reader.open(in, 32, bytes.length, true);
        assertThat(header.baseOffset()).isEqualTo(7);
        assertThat(header.count()).isEqualTo(3);
        assertThat(header.producerId()).isEqualTo(-1);
        assertThat(header.producerEpoch()).isEqualTo((short) -1);
        assertThat(header.baseSequence()).isEqualTo(-1);
        assertThat(header.attributes()).isEqualTo((short) 0);
        assertThat(header.lastOffsetDelta()).isEqualTo(2);
        for (long n = 7; n < 10; n++) {
            reader.advance();
            assertThat(reader.offset()).isEqualTo(n);
            assertThat(reader.timestamp()).isEqualTo(ReferenceBatches.timestamp(n));
            byte[] key = ReferenceBatches.key(n);
            assertThat(reader.keyLength()).isEqualTo(key == null ? -1 : key.length);
            byte[] value = new byte[reader.valueLength()];
            in.get(reader.valueOffset(), value);
            assertThat(value).isEqualTo(ReferenceBatches.value(n));
            assertThat(reader.headers()).isEqualTo(ReferenceBatches.headers(n));
        }
        assertThat(reader.hasNext()).isFalse();
    }

    @Test
    void skippingNRecordsByTheirLengthsLandsOnTheRecordAtThatOffset() {
        byte[] bytes = batch(20, 6);
        RecordBatchReader reader = new RecordBatchReader();
        for (int n = 0; n <= 6; n++) {
            reader.open(inside(bytes, false), 32, bytes.length, true);
            reader.skip(n);
            if (n < 6) {
                reader.advance();
                assertThat(reader.offset()).isEqualTo(20 + n);
            } else {
                assertThat(reader.hasNext()).isFalse();
            }
        }
        reader.open(inside(bytes, false), 32, bytes.length, true);
        assertThatThrownBy(() -> reader.skip(7)).isInstanceOf(MalformedBatchException.class).hasMessageContaining("6 left");
    }

    @Test
    void movingToAPositionAnEarlierWalkLearntLandsOnThatRecord() {
        byte[] bytes = batch(20, 6);
        RecordBatchReader reader = new RecordBatchReader();
        reader.open(inside(bytes, true), 32, bytes.length, true);
        int[] positions = new int[6];
        for (int i = 0; i < 6; i++) {
            assertThat(reader.recordIndex()).isEqualTo(i);
            positions[i] = reader.recordPosition();
            reader.skip(1);
        }
        assertThat(positions[0]).isEqualTo(RecordBatch.HEADER_SIZE);
        for (int n = 0; n < 6; n++) {
            reader.open(inside(bytes, true), 32, bytes.length, true);
            reader.moveTo(n, positions[n]);
            reader.advance();
            assertThat(reader.offset()).isEqualTo(20 + n);
            assertThat(reader.recordIndex()).isEqualTo(n + 1);
        }
    }

    @Test
    void aPositionThatIsNotItsRecordsIsAMalformedBatchNeverAWrongRecord() {
        byte[] bytes = batch(20, 6);
        RecordBatchReader reader = new RecordBatchReader();
        reader.open(inside(bytes, false), 32, bytes.length, true);
        reader.skip(3);
        int third = reader.recordPosition();
        reader.open(inside(bytes, false), 32, bytes.length, true);
        reader.moveTo(4, third); // record 3's bytes taken for record 4: its offset delta says 3
        assertThatThrownBy(reader::advance).isInstanceOf(MalformedBatchException.class)
                .hasMessageContaining("record 4 has offset delta 3");
        reader.open(inside(bytes, false), 32, bytes.length, true);
        reader.skip(2);
        assertThatThrownBy(() -> reader.moveTo(1, third)).as("backwards").isInstanceOf(MalformedBatchException.class);
        assertThatThrownBy(() -> reader.moveTo(6, third)).as("past the last record").isInstanceOf(MalformedBatchException.class);
        assertThatThrownBy(() -> reader.moveTo(4, bytes.length)).as("past the batch").isInstanceOf(MalformedBatchException.class);
        assertThatThrownBy(() -> reader.moveTo(4, 10)).as("inside the header").isInstanceOf(MalformedBatchException.class);
    }

    @Test
    void everyFlippedBitTheCrcCoversIsAMalformedBatch() {
        byte[] good = batch(40, 5);
        for (int at = RecordBatch.BATCH_LENGTH_OFFSET; at < good.length; at++) {
            if (at >= 12 && at < RecordBatch.MAGIC_OFFSET) {
                continue; // the partition leader epoch is outside the CRC, as in Kafka, and unused
            }
            for (int bit = 0; bit < 8; bit++) {
                byte[] bad = good.clone();
                bad[at] ^= (byte) (1 << bit);
                List<ConsumerRecord> out = new ArrayList<>();
                try {
                    readAll(bad, at % 2 == 0, 0, out);
                    fail("a flip of bit " + bit + " at byte " + at + " went unnoticed");
                } catch (MalformedBatchException e) {
                    assertThat(e.baseOffset()).isEqualTo(40);
                    assertThat(e.getMessage()).isNotBlank();
                }
                assertThat(out).isEmpty();
            }
        }
    }

    @Test
    void damagedRecordsWithAValidCrcAreMalformedBatchesNotOtherExceptions() {
        // what the CRC cannot catch: a batch written wrong and checksummed (a buggy or hostile producer)
        byte[] good = batch(40, 5);
        int refused = 0;
        int flips = 0;
        for (int at = RecordBatch.HEADER_SIZE; at < good.length; at++) {
            for (int bit = 0; bit < 8; bit++) {
                byte[] bad = good.clone();
                bad[at] ^= (byte) (1 << bit);
                ReferenceBatches.recrc(bad);
                flips++;
                try {
                    readAll(bad, false, 0, new ArrayList<>()); // a flip inside a key or value is a different record
                } catch (MalformedBatchException e) {
                    assertThat(e.baseOffset()).isEqualTo(40);
                    refused++;
                }
            }
        }
        // the framing bytes of the records (lengths, attributes, deltas, counts) are about a third of this batch
        assertThat(refused).as("refused of %d flips", flips).isGreaterThan(flips / 10);
    }

    @Test
    void everyTruncationIsAMalformedBatchAfterTheSoundBatchesBeforeIt() {
        byte[] full = concat(batch(0, 3), batch(3, 3));
        int first = batch(0, 3).length;
        for (int cut = first + 1; cut < full.length; cut++) {
            List<ConsumerRecord> out = new ArrayList<>();
            byte[] prefix = Arrays.copyOf(full, cut);
            assertThatThrownBy(() -> readAll(prefix, true, 0, out)).isInstanceOf(MalformedBatchException.class);
            assertThat(out).extracting(ConsumerRecord::offset).containsExactly(0L, 1L, 2L);
        }
    }

    @Test
    void theFlyweightRefusesFieldsOutsideItsRegion() {
        byte[] bytes = batch(0, 1);
        RecordBatch b = new RecordBatch().wrap(inside(bytes, false), 32, 20);
        assertThat(b.baseOffset()).isZero();
        assertThat(b.framingProblem()).contains("shorter than its 61-byte header");
        assertThatThrownBy(b::count).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> new RecordBatch().wrap(ByteBuffer.allocate(10), 4, 7)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> new RecordBatch().wrap(ByteBuffer.allocate(100).order(java.nio.ByteOrder.LITTLE_ENDIAN), 0, 100))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
