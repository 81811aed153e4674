package io.sluice.core;

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

    @Override
    void close();
}
