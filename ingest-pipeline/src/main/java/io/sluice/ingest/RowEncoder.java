package io.sluice.ingest;

import java.util.List;

/**
 * Typed rows: turns one event into one RowBinary row for {@link #columns()} of the target table (in that order).
 * Implementations must be stateless or thread-safe (several batches are encoded in parallel) and must throw
 * (any RuntimeException) for an event they cannot encode: that event is dead-lettered with the message.
 * For the config file, an implementation needs a public no-argument constructor ({@code ingest.<name>.row.encoder}).
 */
public interface RowEncoder {

    /** The columns this encoder writes, in order; validated against {@code system.columns} at start. */
    List<String> columns();

    /** Appends exactly one row. */
    void encode(byte[] event, RowBinaryWriter out);
}
