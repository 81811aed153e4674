package io.sluice.kafka.internal;

import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.UnsupportedForMessageFormatException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.CloseableIterator;

import io.sluice.core.SluiceException;
import io.sluice.records.CheckedBatch;
import io.sluice.records.MalformedBatchException;
import io.sluice.records.RecordBatchChecker;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * One record batch of a Produce request, checked and in the form the journal stores: Kafka's RecordBatch v2,
 * uncompressed, offset deltas 0..count-1, every record with a value — what every Sluice reader (Kafka fetch, the
 * embedded and network consumers, ingest) reads unchanged. The producer fields (id, epoch, base sequence) are kept,
 * so idempotence state can be rebuilt from the journal as Kafka rebuilds it from its log.
 *
 * <p>Where decompression happens: here, once, on produce. A compressed batch (gzip, snappy, lz4, zstd) is validated
 * by decompressing it with kafka-clients and rebuilt uncompressed with {@link MemoryRecordsBuilder} (same producer
 * fields, timestamps, keys, values, headers). Kafka keeps the compressed bytes and so fetches cost it nothing; Sluice
 * pays the decompression on produce and the larger journal, and in exchange no reader needs a codec. An
 * uncompressed batch that passes the checks is stored as the client sent it (its bytes are a slice of the request).
 *
 * @param checked      the batch to append, as record-batch's checker passed it (a slice of the request frame, or a
 *                     rebuilt heap buffer)
 * @param producerId   -1 when the producer is not idempotent
 * @param producerEpoch its epoch
 * @param baseSequence its first sequence (-1 without idempotence)
 * @param rebuilt      true when decompressed and rebuilt (the bytes do not refer to the request frame)
 */
record ProducedBatch(CheckedBatch checked, long producerId, short producerEpoch, int baseSequence, boolean rebuilt) {
    /**
     * Sluice's one check of a producer's batch (record-batch's {@link RecordBatchChecker}, the rules the binary port
     * applies too), with an idempotent producer's id, epoch and sequence allowed. It does not compute the CRC32C:
     * {@link #checkBatch} has just verified it with kafka-clients' {@code ensureValid()} (needed anyway before a
     * compressed batch is decompressed, and answered as CORRUPT_MESSAGE), and a rebuilt batch gets its CRC from
     * {@link MemoryRecordsBuilder}; so each produced batch's CRC is computed once. One per thread: it keeps a reader.
     */
    private static final ThreadLocal<RecordBatchChecker> CHECKER =
            ThreadLocal.withInitial(RecordBatchChecker::forIdempotentProducersWithVerifiedCrc);

    int recordCount() {
        return checked.recordCount();
    }

    /** The batch's bytes (a view, no copy). */
    ByteBuffer bytes() {
        ByteBuffer view = checked.buffer().duplicate();
        view.limit(checked.offset() + checked.length());
        view.position(checked.offset());
        return view.slice();
    }

    int lastSequence() {
        return baseSequence < 0 ? -1 : (int) ((baseSequence + (long) recordCount() - 1) % (Integer.MAX_VALUE + 1L));
    }

    /** A heap copy of the bytes, when they refer to the request frame (which is released after the handler). */
    ProducedBatch detached() {
        if (rebuilt) {
            return this;
        }
        return new ProducedBatch(checked.copy(), producerId, producerEpoch, baseSequence, true);
    }

    /**
     * Checks the records of one partition of a Produce request and returns its batches ready to append.
     *
     * @param maxEventSize the core's max.event.size, with Sluice's measure of a record's size
     * @throws org.apache.kafka.common.errors.ApiException naming what is refused: UNSUPPORTED_FOR_MESSAGE_FORMAT (magic
     *         below 2), CORRUPT_MESSAGE (framing, CRC), INVALID_RECORD (control or transactional batches, null values
     *         or header values, offset deltas out of order), MESSAGE_TOO_LARGE
     */
    static List<ProducedBatch> check(MemoryRecords records, int maxEventSize) {
        List<ProducedBatch> out = new ArrayList<>(1);
        int consumed = 0;
        try {
            for (MutableRecordBatch batch : records.batches()) {
                consumed += batch.sizeInBytes();
                out.add(checkBatch(records, batch, consumed, maxEventSize));
            }
        } catch (CorruptRecordException | InvalidRecordException | UnsupportedForMessageFormatException
                 | RecordTooLargeException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new CorruptRecordException("record batch could not be read: " + e.getMessage());
        }
        if (out.isEmpty() || consumed != records.sizeInBytes()) {
            throw new CorruptRecordException("records of " + records.sizeInBytes() + " bytes hold " + consumed
                    + " bytes of whole batches");
        }
        return out;
    }

    private static ProducedBatch checkBatch(MemoryRecords records, MutableRecordBatch batch, int end, int maxEventSize) {
        if (batch.magic() < RecordBatch.MAGIC_VALUE_V2) {
            throw new UnsupportedForMessageFormatException("message format v" + batch.magic()
                    + " is not supported: Sluice stores RecordBatch v2 (Kafka 0.11+ clients)");
        }
        if (batch.magic() > RecordBatch.MAGIC_VALUE_V2) {
            throw new CorruptRecordException("unknown magic " + batch.magic());
        }
        batch.ensureValid(); // size and CRC32C: the one CRC computation of the batch (CorruptRecordException: CORRUPT_MESSAGE)
        if (batch.isControlBatch()) {
            throw new InvalidRecordException("control batches are not accepted: Sluice does not support transactions");
        }
        if (batch.isTransactional()) {
            throw new InvalidRecordException("transactional batches are not accepted: Sluice does not support transactions");
        }
        boolean rebuild = batch.isCompressed() || batch.timestampType() == TimestampType.LOG_APPEND_TIME;
        if (!rebuild) {
            ByteBuffer whole = records.buffer();
            int start = whole.position() + end - batch.sizeInBytes();
            return new ProducedBatch(checked(whole, start, batch.sizeInBytes(), maxEventSize), batch.producerId(),
                    batch.producerEpoch(), batch.baseSequence(), false);
        }
        int count = 0;
        List<Record> kept = new ArrayList<>();
        try (CloseableIterator<Record> it = batch.streamingIterator(BufferSupplier.NO_CACHING)) {
            while (it.hasNext()) {
                Record record = it.next();
                if (record.offset() != batch.baseOffset() + count) {
                    throw new InvalidRecordException("record " + count + " has offset delta "
                            + (record.offset() - batch.baseOffset()) + ", expected " + count);
                }
                checkRecord(record, count, maxEventSize);
                kept.add(record);
                count++;
            }
        }
        if (count == 0) {
            throw new InvalidRecordException("an empty record batch");
        }
        if (batch.lastOffset() - batch.baseOffset() != count - 1) {
            throw new InvalidRecordException("last offset delta " + (batch.lastOffset() - batch.baseOffset())
                    + " disagrees with " + count + " records");
        }
        ByteBuffer rebuilt = rebuildUncompressed(batch, kept);
        return new ProducedBatch(checked(rebuilt, rebuilt.position(), rebuilt.remaining(), maxEventSize),
                batch.producerId(), batch.producerEpoch(), batch.baseSequence(), true);
    }

    /**
     * The batch through record-batch's checker (framing, every record's lengths, offset deltas 0, 1, 2, ..., values and
     * header values present, record attributes 0, the max timestamp, Sluice's size bound), with its refusals in
     * Kafka's terms: INVALID_RECORD naming what is wrong, MESSAGE_TOO_LARGE for a record over max.event.size.
     */
    private static CheckedBatch checked(ByteBuffer in, int offset, int length, int maxEventSize) {
        try {
            return CHECKER.get().checkProduced(in, offset, length, maxEventSize);
        } catch (MalformedBatchException e) {
            throw new InvalidRecordException("record batch refused: " + e.getMessage());
        } catch (SluiceException.RecordTooLargeException e) {
            throw new RecordTooLargeException(e.getMessage());
        }
    }

    private static void checkRecord(Record record, int index, int maxEventSize) {
        if (!record.hasValue()) {
            throw new InvalidRecordException("record " + index + " has a null value: Sluice stores values (no tombstones)");
        }
        long size = 26L + Math.max(0, record.keySize()) + record.valueSize();
        for (Header h : record.headers()) {
            if (h.value() == null) {
                throw new InvalidRecordException("record " + index + " has header '" + h.key() + "' with a null value");
            }
            size += 6L + h.key().length() + h.value().length;
        }
        if (size > maxEventSize) {
            throw new RecordTooLargeException("record " + index + " is " + size + " bytes, over max.event.size=" + maxEventSize);
        }
    }

    /** The records again as one uncompressed CreateTime batch with the same producer fields. */
    private static ByteBuffer rebuildUncompressed(MutableRecordBatch batch, List<Record> records) {
        int estimate = 61;
        for (Record r : records) {
            estimate += r.sizeInBytes() + 16;
        }
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(estimate), RecordBatch.MAGIC_VALUE_V2,
                Compression.NONE, TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, batch.producerId(),
                batch.producerEpoch(), batch.baseSequence(), false, false, RecordBatch.NO_PARTITION_LEADER_EPOCH);
        long timestampOverride = batch.timestampType() == TimestampType.LOG_APPEND_TIME ? batch.maxTimestamp() : -1;
        for (int i = 0; i < records.size(); i++) {
            Record r = records.get(i);
            builder.appendWithOffset(i, timestampOverride >= 0 ? timestampOverride : r.timestamp(), r.key(), r.value(), r.headers());
        }
        return builder.build().buffer();
    }
}
