package io.sluice.core.internal.journal;

/**
 * A sparse, bounded, in-memory index from offset to the journal batch holding it, as Kafka's offset index: entries of
 * (base offset, Chronicle index), ascending in both. While it has room it holds every batch, so a read by offset finds
 * its batch without touching any other ({@link PartitionJournal#documentIndexOf}); once {@link #MAX_ENTRIES} are used
 * it keeps every other entry and records every second batch from then on (and so on, doubling), so a lookup narrows
 * the search to {@link #interval()} batches. An entry is a hint checked against the cycle map, never a fact on its own:
 * entries of cycle files removed by retention stay until thinned, and are ignored.
 *
 * <p>Single writer (the journal writer, after each committed batch, and the constructor's recovery before that), any
 * number of readers: the writer fills the arrays of the current {@link Entries} and then publishes the count (a
 * volatile write); growing or thinning builds new arrays and publishes them whole. A reader works on one snapshot.
 */
final class BatchIndex {
    /**
     * Entries per partition at most: 16 bytes each, so at most 256 KiB per partition. A partition of full coalesced
     * documents ({@link PartitionJournal#DEFAULT_MAX_BATCH_BYTES}) has every batch indexed up to its first GiB.
     */
    static final int MAX_ENTRIES = 1 << 14;
    private static final int INITIAL_ENTRIES = 64;

    private static final class Entries {
        final long[] offsets;
        final long[] indexes;
        volatile int count;

        Entries(int capacity) {
            offsets = new long[capacity];
            indexes = new long[capacity];
        }
    }

    private volatile Entries entries = new Entries(INITIAL_ENTRIES);
    /** Batches between two entries (writer only). */
    private int interval = 1;
    /** Batches still to pass over before the next entry (writer only). */
    private int skip;

    /** A batch starting at {@code baseOffset} was stored at Chronicle {@code index}. Writer only; ascending calls. */
    void committed(long baseOffset, long index) {
        if (skip > 0) {
            skip--;
            return;
        }
        add(baseOffset, index);
    }

    /** Adds an entry whatever the interval (recovery samples batches {@link #interval()} apart itself). Writer only. */
    void add(long baseOffset, long index) {
        Entries e = entries;
        int n = e.count;
        if (n > 0 && baseOffset <= e.offsets[n - 1]) {
            return; // not ascending: a batch already indexed (recovery overlapping the writer's first batch)
        }
        if (n == e.offsets.length) {
            e = n < MAX_ENTRIES ? grow(e, n) : thin(e, n);
            n = e.count;
        }
        e.offsets[n] = baseOffset;
        e.indexes[n] = index;
        e.count = n + 1;
        skip = interval - 1;
    }

    private Entries grow(Entries e, int n) {
        Entries more = new Entries(n * 2);
        System.arraycopy(e.offsets, 0, more.offsets, 0, n);
        System.arraycopy(e.indexes, 0, more.indexes, 0, n);
        more.count = n;
        entries = more;
        return more;
    }

    /** Keeps entries 0, 2, 4, …: the next entry (about to be added) is then two old intervals after the last kept. */
    private Entries thin(Entries e, int n) {
        Entries fewer = new Entries(n);
        int kept = 0;
        for (int i = 0; i < n; i += 2) {
            fewer.offsets[kept] = e.offsets[i];
            fewer.indexes[kept] = e.indexes[i];
            kept++;
        }
        fewer.count = kept;
        entries = fewer;
        interval *= 2;
        return fewer;
    }

    /** Batches between two entries: 1 while every batch is indexed. */
    int interval() {
        return interval;
    }

    /** Chronicle index of the last entry whose base offset is at or below {@code offset}, or -1. Any thread. */
    long floorIndex(long offset) {
        Entries e = entries;
        int i = floor(e, e.count, offset);
        return i < 0 ? -1 : e.indexes[i];
    }

    /** Chronicle index of the first entry whose base offset is above {@code offset}, or -1. Any thread. */
    long higherIndex(long offset) {
        Entries e = entries;
        int n = e.count;
        int i = floor(e, n, offset) + 1;
        return i < n ? e.indexes[i] : -1;
    }

    private static int floor(Entries e, int n, long offset) {
        int lo = 0;
        int hi = n - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (e.offsets[mid] <= offset) {
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return hi;
    }
}
