package io.sluice.kafka.internal;

import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Crc32C;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The produce-side checks on batches a client could send, including ones with a valid CRC over bad records. */
class ProducedBatchTest {
    private static MemoryRecordsBuilder builder(Compression compression) {
        return MemoryRecords.builder(ByteBuffer.allocate(4096), RecordBatch.MAGIC_VALUE_V2, compression,
                TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, 5L, (short) 1, 10, false, false,
                RecordBatch.NO_PARTITION_LEADER_EPOCH);
    }

    @Test
    void anUncompressedBatchIsStoredAsSentAndACompressedOneIsRebuiltWithItsProducerFields() {
        MemoryRecordsBuilder plain = builder(Compression.NONE);
        plain.appendWithOffset(0, 1L, "k".getBytes(), "v0".getBytes(), new RecordHeader[]{new RecordHeader("h", "x".getBytes())});
        plain.appendWithOffset(1, 2L, null, "v1".getBytes());
        MemoryRecords sent = plain.build();
        List<ProducedBatch> checked = ProducedBatch.check(sent, 1 << 20);
        assertThat(checked).singleElement().satisfies(b -> {
            assertThat(b.rebuilt()).isFalse();
            assertThat(b.bytes()).isEqualTo(sent.buffer());
            assertThat(b.recordCount()).isEqualTo(2);
            assertThat(b.lastSequence()).isEqualTo(11);
        });

        MemoryRecordsBuilder zstd = builder(Compression.zstd().build());
        zstd.appendWithOffset(0, 1L, "k".getBytes(), "v0".getBytes());
        zstd.appendWithOffset(1, 2L, "k".getBytes(), "v1".getBytes());
        ProducedBatch rebuilt = ProducedBatch.check(zstd.build(), 1 << 20).get(0);
        assertThat(rebuilt.rebuilt()).isTrue();
        RecordBatch stored = MemoryRecords.readableRecords(rebuilt.bytes()).batches().iterator().next();
        assertThat(stored.isCompressed()).isFalse();
        assertThat(stored.producerId()).isEqualTo(5L);
        assertThat(stored.producerEpoch()).isEqualTo((short) 1);
        assertThat(stored.baseSequence()).isEqualTo(10);
        assertThat(ProducedBatch.check(MemoryRecords.readableRecords(rebuilt.bytes()), 1 << 20).get(0).rebuilt()).isFalse();
    }

    @Test
    void offsetGapsNullValuesOversizedRecordsAndBrokenFramingBehindAValidCrcAreRefused() {
        MemoryRecordsBuilder gap = builder(Compression.NONE);
        gap.appendWithOffset(0, 1L, null, "a".getBytes());
        gap.appendWithOffset(2, 1L, null, "b".getBytes());
        assertThatThrownBy(() -> ProducedBatch.check(gap.build(), 1 << 20)).isInstanceOf(InvalidRecordException.class)
                .hasMessageContaining("offset delta");

        MemoryRecords nullValue = MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("k".getBytes(), null));
        assertThatThrownBy(() -> ProducedBatch.check(nullValue, 1 << 20)).isInstanceOf(InvalidRecordException.class)
                .hasMessageContaining("null value");

        MemoryRecords big = MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(null, new byte[200]));
        assertThatThrownBy(() -> ProducedBatch.check(big, 128)).isInstanceOf(RecordTooLargeException.class);

        // a record whose length overruns the batch, with the CRC recomputed so only the record walk can notice
        MemoryRecords good = MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("k".getBytes(), "v".getBytes()));
        ByteBuffer bad = ByteBuffer.allocate(good.sizeInBytes()).put(good.buffer().duplicate());
        bad.put(61, (byte) 0x7e); // varint 63: far beyond the one small record
        bad.rewind();
        bad.putInt(17, (int) Crc32C.compute(bad, 21, bad.capacity() - 21)); // offsets from the position (0)
        assertThatThrownBy(() -> ProducedBatch.check(MemoryRecords.readableRecords(bad), 1 << 20))
                .isInstanceOf(InvalidRecordException.class).hasMessageContaining("runs past the end");
    }
    @Test
    void aBatchWhoseCrcDoesNotMatchIsCorruptCompressedOrNot() {
        for (Compression compression : List.of(Compression.NONE, Compression.gzip().build())) {
            MemoryRecordsBuilder b = builder(compression);
            b.appendWithOffset(0, 1L, "k".getBytes(), "v0".getBytes());
            b.appendWithOffset(1, 2L, "k".getBytes(), "v1".getBytes());
            ByteBuffer sent = b.build().buffer();
            ByteBuffer flipped = ByteBuffer.allocate(sent.remaining()).put(sent.duplicate());
            flipped.put(flipped.limit() - 1, (byte) (flipped.get(flipped.limit() - 1) ^ 1)); // last byte, inside the CRC's range
            flipped.rewind();
            // kafka-clients' ensureValid() is the one CRC computation of a produced batch: CORRUPT_MESSAGE
            assertThatThrownBy(() -> ProducedBatch.check(MemoryRecords.readableRecords(flipped), 1 << 20))
                    .as(compression.type().name).isInstanceOf(CorruptRecordException.class).hasMessageContaining("crc");
        }
    }
}
