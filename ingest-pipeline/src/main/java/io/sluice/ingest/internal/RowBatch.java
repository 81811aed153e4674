package io.sluice.ingest.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Rows encoded back to back in one byte array, ready to be one INSERT body, with each row's end offset and a
 * caller tag per row (a future, a stream entry id, an offset) so that a rejected batch can be split and
 * its rows reported one by one. Built by one thread, then handed over (safe publication by the executor).
 *
 * <pre>
 *   bytes: | row 0 | row 1 | ... | row n-1 |        ends[i] = end offset of row i (exclusive)
 * </pre>
 */
public final class RowBatch<T> {
    private byte[] bytes;
    private int size;
    private int[] ends;
    private final List<T> tags;
    private final long createdNanos = System.nanoTime();

    public RowBatch(int expectedRows, int expectedBytes) {
        this.bytes = new byte[Math.max(64, expectedBytes)];
        this.ends = new int[Math.max(4, expectedRows)];
        this.tags = new ArrayList<>(Math.max(4, expectedRows));
    }

    /** Appends one row made of {@code len} bytes. */
    public void add(byte[] row, int off, int len, T tag) {
        ensure(len);
        System.arraycopy(row, off, bytes, size, len);
        size += len;
        endRow(tag);
    }

    /** Reserves room for {@code extra} more bytes of the row being written with {@link #buffer()}/{@link #advance}. */
    public void ensure(int extra) {
        if (size + extra > bytes.length) {
            bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, size + extra));
        }
    }

    byte[] buffer() {
        return bytes;
    }

    void advance(int n) {
        size += n;
    }

    void endRow(T tag) {
        if (tags.size() == ends.length) {
            ends = Arrays.copyOf(ends, ends.length * 2);
        }
        ends[tags.size()] = size;
        tags.add(tag);
    }

    public int rows() {
        return tags.size();
    }

    public int bytes() {
        return size;
    }

    public boolean isEmpty() {
        return tags.isEmpty();
    }

    public long ageNanos() {
        return System.nanoTime() - createdNanos;
    }

    public T tag(int row) {
        return tags.get(row);
    }

    public List<T> tags() {
        return tags;
    }

    public byte[] array() {
        return bytes;
    }

    public int start(int row) {
        return row == 0 ? 0 : ends[row - 1];
    }

    public int end(int row) {
        return ends[row];
    }

    /** A copy of rows {@code from} (inclusive) to {@code to} (exclusive) whose tag passes {@code keep}. */
    public RowBatch<T> select(int from, int to, java.util.function.Predicate<T> keep) {
        RowBatch<T> out = new RowBatch<>(to - from, end(to - 1) - start(from));
        for (int i = from; i < to; i++) {
            if (keep.test(tags.get(i))) {
                out.add(bytes, start(i), end(i) - start(i), tags.get(i));
            }
        }
        return out;
    }
}
