package io.sluice.records;

/**
 * A record batch failed a check: its framing, its CRC32C, a record's layout, or (for a batch a producer sent) one of
 * the rules {@link RecordBatchChecker} enforces. The message says what and where; callers add whose batch it was
 * (the journal names the partition and offset, the protocol answers {@code INVALID_REQUEST} or
 * {@code CORRUPT_RECORD}).
 */
public final class MalformedBatchException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final long baseOffset;

    public MalformedBatchException(long baseOffset, String message) {
        super(message);
        this.baseOffset = baseOffset;
    }

    /** The base offset the batch claims; -1 when not even that could be read. */
    public long baseOffset() {
        return baseOffset;
    }
}
