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
 * parses it) and written as is, one per line ({@code FORMAT JSONEachRow}). With provenance columns the closing
 * brace is replaced by {@code ,"_sluice_partition":P,"_sluice_offset":O}} (offset-range) or
 * {@code ,"_sluice_entry":"ID","_sluice_index":K}} (streams) — byte surgery, no parsing.
 *
 * <p>Typed rows: the {@link RowEncoder} writes RowBinary for its columns ({@code INSERT INTO t (c1, c2, ...) FORMAT
 * RowBinary}); provenance columns, when used, follow (UInt32 + UInt64, or String + UInt32).
 */
public final class RowFormat {
    private final RowEncoder encoder;
    /** Columns Sluice fills itself to identify a row's origin (and skip rows that already landed). */
    public enum Provenance {
        NONE,
        /** {@code _sluice_partition UInt32, _sluice_offset UInt64}: the offset-range strategy */
        OFFSETS,
        /** {@code _sluice_entry String, _sluice_index UInt32}: the stream strategies */
        ENTRIES
    }

    private final Provenance provenance;
    /** Provenance columns: filled by Sluice only, never from event content. */
    private final List<String> reserved;
    private final String insertSql;
    private static final byte[] PARTITION_KEY = ("\"" + ClickHouseTarget.PARTITION_COLUMN + "\":").getBytes(StandardCharsets.US_ASCII);
    private static final byte[] OFFSET_KEY = (",\"" + ClickHouseTarget.OFFSET_COLUMN + "\":").getBytes(StandardCharsets.US_ASCII);
    private final ThreadLocal<RowBinaryWriter> scratch = ThreadLocal.withInitial(() -> new RowBinaryWriter(256));

    public RowFormat(String table, RowEncoder encoder, Provenance provenance) {
        this.encoder = encoder;
        this.provenance = provenance;
        this.reserved = provenance == Provenance.OFFSETS ? List.of(ClickHouseTarget.PARTITION_COLUMN, ClickHouseTarget.OFFSET_COLUMN)
                : provenance == Provenance.ENTRIES ? List.of(ClickHouseTarget.ENTRY_COLUMN, ClickHouseTarget.INDEX_COLUMN) : List.of();
        if (encoder != null) {
            for (String c : encoder.columns()) {
                if (reserved.contains(c)) {
                    throw io.sluice.core.SluiceException.InvalidConfigException.of("row.encoder", encoder.getClass().getName(),
                            "writes the column " + c + ", which Sluice fills itself with the row's provenance (remove it from columns())");
                }
            }
        }
        if (encoder == null) {
            this.insertSql = "INSERT INTO " + table + " FORMAT JSONEachRow";
        } else {
            List<String> cols = new ArrayList<>(encoder.columns());
            if (provenance == Provenance.OFFSETS) {
                cols.add(ClickHouseTarget.PARTITION_COLUMN);
                cols.add(ClickHouseTarget.OFFSET_COLUMN);
            } else if (provenance == Provenance.ENTRIES) {
                cols.add(ClickHouseTarget.ENTRY_COLUMN);
                cols.add(ClickHouseTarget.INDEX_COLUMN);
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
            if (!reserved.isEmpty()) {
                String forged = JsonKeys.firstTopLevelKeyIn(event, reserved);
                if (forged != null) {
                    throw new IllegalArgumentException("event carries the key " + forged + ", a column Sluice fills itself with"
                            + " the row's provenance (an event may not choose it): " + preview(event));
                }
            }
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

    public Provenance provenance() {
        return provenance;
    }

    /** Appends an encoded row plus its partition and offset (when the table has the offset columns). */
    public <T> void append(RowBatch<T> batch, byte[] row, int partition, long offset, T tag) {
        if (provenance != Provenance.OFFSETS) {
            append(batch, row, tag);
        } else if (encoder == null) {
            appendJsonOffsets(batch, row, partition, offset, tag);
        } else {
            RowBinaryWriter w = scratch.get();
            w.reset();
            w.writeBytes(row, 0, row.length).writeUInt32(partition).writeUInt64(offset);
            batch.add(w.array(), 0, w.size(), tag);
        }
    }

    /** Appends an encoded row plus its stream entry id and index in the entry (when the table has the entry columns). */
    public <T> void append(RowBatch<T> batch, byte[] row, String entryId, int index, T tag) {
        if (provenance != Provenance.ENTRIES) {
            append(batch, row, tag);
        } else if (encoder == null) {
            // entry ids are digits and '-': no escaping needed
            appendJson(batch, row, "\"" + ClickHouseTarget.ENTRY_COLUMN + "\":\"" + entryId + "\",\""
                    + ClickHouseTarget.INDEX_COLUMN + "\":" + index, tag);
        } else {
            RowBinaryWriter w = scratch.get();
            w.reset();
            w.writeBytes(row, 0, row.length).writeString(entryId).writeUInt32(index);
            batch.add(w.array(), 0, w.size(), tag);
        }
    }

    /**
     * As {@link #appendJson} with the offset columns, written straight into the batch: the offset-range hot path runs
     * it once per event, so it builds no String and no suffix array (the keys are constants, the numbers are written
     * digit by digit).
     */
    private <T> void appendJsonOffsets(RowBatch<T> batch, byte[] row, int partition, long offset, T tag) {
        int close = lastNonSpace(row);
        int open = firstNonSpace(row, row.length);
        boolean empty = isBlank(row, open + 1, close); // "{}"
        batch.ensure(close + 1 + PARTITION_KEY.length + 10 + OFFSET_KEY.length + 20 + 2);
        byte[] out = batch.buffer();
        int at = batch.bytes();
        System.arraycopy(row, 0, out, at, close);
        at += close;
        if (!empty) {
            out[at++] = ',';
        }
        System.arraycopy(PARTITION_KEY, 0, out, at, PARTITION_KEY.length);
        at = writeDecimal(out, at + PARTITION_KEY.length, partition);
        System.arraycopy(OFFSET_KEY, 0, out, at, OFFSET_KEY.length);
        at = writeDecimal(out, at + OFFSET_KEY.length, offset);
        out[at++] = '}';
        out[at++] = '\n';
        batch.advance(at - batch.bytes());
        batch.endRow(tag);
    }

    /** Writes {@code v >= 0} in decimal ASCII at {@code at}; returns the index after its last digit (at most 19 digits). */
    static int writeDecimal(byte[] out, int at, long v) {
        int digits = 1;
        for (long x = v; x >= 10; x /= 10) {
            digits++;
        }
        int end = at + digits;
        for (int i = end - 1; i >= at; i--) {
            out[i] = (byte) ('0' + v % 10);
            v /= 10;
        }
        return end;
    }

    /** Replaces the object's closing brace by {@code ,<fields>}} — byte surgery, no parsing. */
    private <T> void appendJson(RowBatch<T> batch, byte[] row, String fields, T tag) {
        int close = lastNonSpace(row);
        int open = firstNonSpace(row, row.length);
        boolean empty = isBlank(row, open + 1, close); // "{}"
        byte[] suffix = ((empty ? "" : ",") + fields + "}\n").getBytes(StandardCharsets.US_ASCII);
        batch.ensure(close + suffix.length);
        System.arraycopy(row, 0, batch.buffer(), batch.bytes(), close);
        batch.advance(close);
        System.arraycopy(suffix, 0, batch.buffer(), batch.bytes(), suffix.length);
        batch.advance(suffix.length);
        batch.endRow(tag);
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
