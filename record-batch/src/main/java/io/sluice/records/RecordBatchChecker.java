package io.sluice.records;

import io.sluice.core.SluiceException;

import java.nio.ByteBuffer;

/**
 * The broker's check of a batch a producer sent, before it is stored byte for byte (readers trust what the journal
 * holds): exactly one whole batch; magic 2; attributes 0 (no compression, CreateTime, not transactional, not a
 * control batch) with producer id, epoch and base sequence -1 (no idempotence); at least one record; the CRC32C; then
 * every record as {@link RecordBatchReader#advance} checks it (lengths inside the record, offset deltas 0, 1, 2, ...,
 * a value), with attributes 0, a size ({@link io.sluice.core.ProducerRecord#serializedSize()}'s measure: 26 bytes +
 * key + value + 6 + key + value per header) of at most {@code maxEventSize}, and a max timestamp equal to the largest
 * record timestamp. Allocates only the {@link CheckedBatch} it returns.
 *
 * <p>{@link #forIdempotentProducers()} accepts the same batches with producer id, epoch and base sequence set (any
 * values: a Kafka-protocol front checks the sequences against its producer state), still uncompressed and not
 * transactional; a front that receives compressed batches rebuilds them uncompressed before the check.
 * {@link #forIdempotentProducersWithVerifiedCrc()} is the same check for a front that has verified every batch's
 * CRC32C itself just before (the Kafka listener, with kafka-clients' {@code ensureValid()}, which it needs anyway
 * before decompressing a batch): the CRC is then computed once per produced batch, not twice.
 *
 * <p>Single-threaded and reusable: one per event loop.
 */
public final class RecordBatchChecker {
    private final RecordBatchReader reader = new RecordBatchReader();
    private final boolean producerIds;
    private final boolean verifyCrc;

    /** The checker of Sluice's own producers' batches: no producer id, epoch or sequence. */
    public RecordBatchChecker() {
        this(false, true);
    }

    private RecordBatchChecker(boolean producerIds, boolean verifyCrc) {
        this.producerIds = producerIds;
        this.verifyCrc = verifyCrc;
    }

    /** A checker that also accepts an idempotent producer's id, epoch and base sequence. */
    public static RecordBatchChecker forIdempotentProducers() {
        return new RecordBatchChecker(true, true);
    }

    /**
     * As {@link #forIdempotentProducers()}, without computing the CRC32C: for a caller that verified it on these same
     * bytes (or built them, CRC included) immediately before. The framing and every record are still checked.
     */
    public static RecordBatchChecker forIdempotentProducersWithVerifiedCrc() {
        return new RecordBatchChecker(true, false);
    }

    /**
     * @return the batch, typed as checked
     * @throws MalformedBatchException for anything malformed, saying what and where (a protocol front answers
     *         {@code INVALID_REQUEST})
     * @throws SluiceException.RecordTooLargeException for a record above {@code maxEventSize}
     */
    public CheckedBatch checkProduced(ByteBuffer in, int offset, int length, int maxEventSize) {
        RecordBatch batch = reader.open(in, offset, length, verifyCrc);
        if (batch.sizeInBytes() != length) {
            throw new MalformedBatchException(batch.baseOffset(), "record batch of " + batch.sizeInBytes() + " bytes in "
                    + length + " bytes: one batch per request");
        }
        short attributes = batch.attributes();
        if (attributes != 0 || (!producerIds && (batch.producerId() != RecordBatch.NO_PRODUCER_ID
                || batch.producerEpoch() != RecordBatch.NO_PRODUCER_EPOCH || batch.baseSequence() != RecordBatch.NO_SEQUENCE))) {
            throw new MalformedBatchException(batch.baseOffset(), "record batch attributes " + attributes
                    + " with producer id/epoch/sequence set: Sluice stores uncompressed, non-transactional,"
                    + " non-idempotent batches only (attributes 0, ids -1)");
        }
        int count = reader.recordCount();
        if (count < 1) {
            throw new MalformedBatchException(batch.baseOffset(), "record batch with " + count + " records");
        }
        long maxTimestamp = Long.MIN_VALUE;
        for (int i = 0; i < count; i++) {
            reader.advance();
            if (reader.attributes() != 0) {
                throw new MalformedBatchException(batch.baseOffset(), "record " + i + " has attributes " + reader.attributes());
            }
            maxTimestamp = Math.max(maxTimestamp, reader.timestamp());
            long size = 26L + Math.max(0, reader.keyLength()) + reader.valueLength()
                    + 6L * reader.headerCount() + reader.headerBytes();
            if (size > maxEventSize) {
                throw new SluiceException.RecordTooLargeException("record " + i + " of " + size
                        + " bytes exceeds maxEventSize=" + maxEventSize + "; nothing of the batch was written");
            }
        }
        long statedMax = batch.maxTimestamp();
        if (statedMax != maxTimestamp) {
            throw new MalformedBatchException(batch.baseOffset(), "max timestamp " + statedMax
                    + " but its records' largest is " + maxTimestamp);
        }
        return new CheckedBatch(in, offset, length, count);
    }
}
