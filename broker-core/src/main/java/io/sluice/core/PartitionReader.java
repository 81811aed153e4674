package io.sluice.core;

import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * A cursor over one partition's journal, for fetch-style readers such as the network broker.
 * <b>Single-threaded</b>: use it from one thread at a time (Chronicle tailers are single-threaded).
 */
public interface PartitionReader extends AutoCloseable {
    TopicPartition partition();

    /** The offset of the next record {@link #read} returns. */
    long position();

    /**
     * Positions at {@code offset}.
     *
     * @throws SluiceException.OffsetOutOfRangeException if the offset is below the start offset or above the end offset
     */
    void seek(long offset);

    /**
     * Reads up to {@code maxRecords} records and about {@code maxBytes} key+value bytes (always at least one record
     * when one is available), handing each to {@code sink} in offset order.
     *
     * @return the number of records read; 0 when the reader is at the end
     */
    int read(int maxRecords, int maxBytes, Consumer<ConsumerRecord> sink);

    /**
     * Reads as {@link #read} does, allocating nothing per record: each record goes to {@code sink} as an
     * {@link EventView} that is valid only during the call and is reused for the next record (its key and value are
     * copied into buffers this reader owns, as a Chronicle tailer reads into a buffer; copy what you keep). Its
     * {@link EventView#publishNanos()} is 0. For scans that look at each record once: replays, exports, checksums.
     *
     * @return the number of records read; 0 when the reader is at the end
     */
    int readViews(int maxRecords, int maxBytes, Consumer<? super EventView> sink);

    /**
     * Copies whole stored record batches (Kafka RecordBatch v2, byte for byte as the journal holds them; see
     * docs/journal-format.md) into {@code sink}, starting with the batch that holds {@link #position()}: that first
     * batch may begin before the position, and the reader of the bytes skips the records before it. Always copies
     * at least one batch when one is available, then whole batches while the total stays within {@code maxBytes}.
     * Nothing is decoded: the reader checks each batch's framing (magic, length, record count) to walk to the next
     * one, not its CRC32C, which the receiver checks. Afterwards {@link #position()} is the offset after the last
     * record copied.
     *
     * @return the number of bytes copied; 0 when the reader is at the end
     * @throws SluiceException.CorruptRecordException if the first batch's framing is damaged (a damaged batch after
     *         sound ones ends the read before it; the next read reports it)
     */
    int readBatches(int maxBytes, BatchSink sink);

    /** Where {@link #readBatches} puts each batch. */
    @FunctionalInterface
    interface BatchSink {
        /**
         * Makes room for one batch of {@code length} bytes and returns a buffer whose {@code length} bytes from its
         * position the reader fills (one copy out of the journal's mapped memory). The reader advances the buffer's
         * position past them; the buffer is not used after the next call.
         */
        ByteBuffer claim(int length);
    }

    @Override
    void close();
}
