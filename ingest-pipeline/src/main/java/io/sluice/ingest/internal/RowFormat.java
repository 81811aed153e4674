package io.sluice.ingest.internal;

import io.sluice.ingest.RowBinaryWriter;
import io.sluice.ingest.RowEncoder;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * How an event becomes row bytes in a {@link RowBatch}, and the INSERT statement that goes with them.
 *
 * <p>JSON passthrough: the event must be one JSON object; it is checked only for its outer braces (ClickHouse
 * parses it) and written as is, one per line ({@code FORMAT JSONEachRow}). With journal offset columns the
 * closing brace is replaced by {@code ,"_sluice_partition":P,"_sluice_offset":O}} — byte surgery, no parsing.
 *
 * <p>Typed rows: the {@link RowEncoder} writes RowBinary for its columns ({@code INSERT INTO t (c1, c2, ...) FORMAT
 * RowBinary}); offset columns, when used, follow as UInt32 and UInt64.
 */
public final class RowFormat {
    private final RowEncoder encoder;
    private final boolean offsetColumns;
    private final String insertSql;
    private final ThreadLocal<RowBinaryWriter> scratch = ThreadLocal.withInitial(() -> new RowBinaryWriter(256));

    public RowFormat(String table, RowEncoder encoder, boolean offsetColumns) {
        this.encoder = encoder;
        this.offsetColumns = offsetColumns;
        if (encoder == null) {
            this.insertSql = "INSERT INTO " + table + " FORMAT JSONEachRow";
        } else {
            List<String> cols = new ArrayList<>(encoder.columns());
            if (offsetColumns) {
                cols.add(ClickHouseTarget.PARTITION_COLUMN);
                cols.add(ClickHouseTarget.OFFSET_COLUMN);
            }
            this.insertSql = "INSERT INTO " + table + " (" + String.join(", ", cols) + ") FORMAT RowBinary";
        }
    }

    public String insertSql() {
        return insertSql;
    }

    public boolean isJson() {
        return encoder == null;
    }

    /**
     * Checks (JSON) or encodes (typed) one event into the bytes that {@link #append} adds to a batch.
     *
     * @throws IllegalArgumentException if the event is not one JSON object, or the encoder refused it
     */
    public byte[] encode(byte[] event) {
        if (encoder == null) {
            checkJsonObject(event);
            return event;
        }
        RowBinaryWriter w = scratch.get();
        w.reset();
        try {
            encoder.encode(event, w);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("row encoder " + encoder.getClass().getSimpleName() + " refused the event: " + e.getMessage(), e);
        }
        return java.util.Arrays.copyOf(w.array(), w.size());
    }

    /** Appends an encoded row (from {@link #encode}). */
    public <T> void append(RowBatch<T> batch, byte[] row, T tag) {
        if (encoder == null) {
            batch.ensure(row.length + 1);
            System.arraycopy(row, 0, batch.buffer(), batch.bytes(), row.length);
            batch.advance(row.length);
            batch.buffer()[batch.bytes()] = '\n';
            batch.advance(1);
            batch.endRow(tag);
        } else {
            batch.add(row, 0, row.length, tag);
        }
    }

    /** Appends an encoded row plus its journal partition and offset (offset columns). */
    public <T> void append(RowBatch<T> batch, byte[] row, int partition, long offset, T tag) {
        if (!offsetColumns) {
            append(batch, row, tag);
            return;
        }
        if (encoder == null) {
            int close = lastNonSpace(row);
            boolean empty = firstNonSpace(row, close) == firstNonSpace(row, row.length) && isBlank(row, firstNonSpace(row, row.length) + 1, close);
            byte[] suffix = ((empty ? "" : ",") + "\"" + ClickHouseTarget.PARTITION_COLUMN + "\":" + partition + ",\""
                    + ClickHouseTarget.OFFSET_COLUMN + "\":" + offset + "}\n").getBytes(StandardCharsets.US_ASCII);
            batch.ensure(close + suffix.length);
            System.arraycopy(row, 0, batch.buffer(), batch.bytes(), close);
            batch.advance(close);
            System.arraycopy(suffix, 0, batch.buffer(), batch.bytes(), suffix.length);
            batch.advance(suffix.length);
            batch.endRow(tag);
        } else {
            batch.ensure(row.length + 12);
            RowBinaryWriter w = scratch.get();
            w.reset();
            w.writeBytes(row, 0, row.length).writeUInt32(partition).writeUInt64(offset);
            batch.add(w.array(), 0, w.size(), tag);
        }
    }

    /** The event bytes of a row in a batch, for dead letters (JSON rows without their newline). */
    public byte[] rowBytes(RowBatch<?> batch, int row) {
        int start = batch.start(row);
        int end = batch.end(row);
        if (encoder == null && end > start && batch.array()[end - 1] == '\n') {
            end--;
        }
        return java.util.Arrays.copyOfRange(batch.array(), start, end);
    }

    static void checkJsonObject(byte[] event) {
        int last = lastNonSpace(event);
        int first = firstNonSpace(event, event.length);
        if (first < 0 || last < 0 || event[first] != '{' || event[last] != '}' || first == last) {
            throw new IllegalArgumentException("event is not one JSON object (must start with '{' and end with '}'): "
                    + preview(event));
        }
    }

    private static int firstNonSpace(byte[] b, int limit) {
        for (int i = 0; i < limit; i++) {
            if (!isSpace(b[i])) {
                return i;
            }
        }
        return -1;
    }

    private static int lastNonSpace(byte[] b) {
        for (int i = b.length - 1; i >= 0; i--) {
            if (!isSpace(b[i])) {
                return i;
            }
        }
        return -1;
    }

    private static boolean isBlank(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (!isSpace(b[i])) {
                return false;
            }
        }
        return true;
    }

    private static boolean isSpace(byte c) {
        return c == ' ' || c == '\n' || c == '\r' || c == '\t';
    }

    private static String preview(byte[] event) {
        String s = new String(event, 0, Math.min(event.length, 80), StandardCharsets.UTF_8);
        return event.length > 80 ? s + "..." : s;
    }
}
