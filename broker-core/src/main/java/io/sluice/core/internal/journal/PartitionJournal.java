package io.sluice.core.internal.journal;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.EpochClock;
import io.sluice.core.RollCycleType;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.bus.RingSlot;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.SyncMode;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.TailerDirection;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueStore;
import net.openhft.chronicle.wire.DocumentContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The durable log of one partition: a Chronicle Queue with one document per event and dense offsets.
 *
 * <p><b>Threading.</b> {@link #append} and {@link #sync} are called only by the partition's journal writer thread
 * (single writer). {@link #endOffset()} and {@link #startOffset()} are safe from any thread. Readers
 * ({@link JournalReader}) each own a tailer and read concurrently with the writer. Retention runs on the
 * housekeeper thread and never touches the file being appended to.
 *
 * <p><b>Offsets.</b> Chronicle indexes are (cycle, sequence) pairs, dense only within a roll cycle. The journal keeps
 * a small map from each cycle's first offset to its cycle, so offset {@code o} lives at
 * {@code index(cycle, o - base(cycle))}. The map is rebuilt on open from the first record of each cycle file.
 */
public final class PartitionJournal implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionJournal.class);

    static {
        ChronicleSupport.disableTelemetry();
    }

    private final TopicPartition partition;
    private final Path dir;
    private final SingleChronicleQueue queue;
    private final RollCycle rollCycle;
    private final DateTimeFormatter fileNames;
    /** first offset of a cycle → cycle; written by the journal writer (and retention removes), read by readers. */
    private final ConcurrentSkipListMap<Long, Integer> cycleByBaseOffset = new ConcurrentSkipListMap<>();

    private volatile long endOffset;
    private volatile long startOffset;
    private volatile long appendedBytes;

    private final long minFreeDiskBytes;
    private final long diskCheckIntervalBytes;
    private final java.nio.file.FileStore fileStore;

    /** end offset covered by the last successful {@link #sync()}: everything below it is on disk. */
    private volatile long syncedEndOffset;

    private static final int MAX_UNSYNCED_CYCLES = 8;

    // journal-writer thread state
    private ExcerptAppender appender;
    private int lastCycle = Integer.MIN_VALUE;
    /** cycles appended to since the last successful sync (usually one; two around a roll) */
    private final java.util.TreeSet<Integer> unsyncedCycles = new java.util.TreeSet<>();
    /** a cycle file was created since the last sync: its directory entry must be made durable too */
    private boolean directoryUnsynced;
    private long bytesAtLastDiskCheck = Long.MIN_VALUE / 2; // check on the first append
    private boolean diskFull;

    public PartitionJournal(TopicPartition partition, Path dir, RollCycleType rollCycleType, EpochClock clock,
                            long minFreeDiskBytes) {
        this.partition = partition;
        this.minFreeDiskBytes = minFreeDiskBytes;
        this.diskCheckIntervalBytes = minFreeDiskBytes == 0 ? Long.MAX_VALUE : Math.max(4096, Math.min(1 << 20, minFreeDiskBytes / 4));
        this.dir = dir;
        this.rollCycle = ChronicleSupport.rollCycle(rollCycleType);
        this.fileNames = DateTimeFormatter.ofPattern(rollCycle.format()).withZone(ZoneOffset.UTC);
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new SluiceException.JournalException("cannot create journal directory " + dir, e);
        }
        try {
            this.fileStore = Files.getFileStore(dir);
        } catch (IOException e) {
            throw new SluiceException.JournalException("cannot inspect the file system of " + dir, e);
        }
        this.queue = SingleChronicleQueueBuilder.binary(dir)
                .rollCycle(rollCycle)
                .timeProvider(ChronicleSupport.timeProvider(clock))
                // a writer killed mid-append leaves a locked header; recover it after 2 s instead of Chronicle's default
                .timeoutMS(2_000)
                // without a sync mode Chronicle's appender.sync() is a no-op: SYNC makes it msync(MS_SYNC),
                // which Acks.SYNC relies on. Appends themselves stay plain memory writes.
                .syncMode(SyncMode.SYNC)
                .build();
        recover();
    }

    /** Rebuilds the cycle map and the end offset from what is on disk (after a clean close or a crash). */
    private void recover() {
        cycleByBaseOffset.clear();
        queue.refreshDirectoryListing();
        long end = 0;
        long start = 0;
        try (ExcerptTailer tailer = queue.createTailer()) {
            int first = queue.firstCycle();
            int last = queue.lastCycle();
            boolean haveStart = false;
            if (first != Integer.MAX_VALUE && last != Integer.MIN_VALUE) {
                for (int cycle = first; cycle <= last; cycle = nextCycle(cycle)) {
                    if (tailer.moveToCycle(cycle) && readBase(tailer, cycle)) {
                        if (!haveStart) {
                            start = cycleByBaseOffset.firstKey();
                            haveStart = true;
                        }
                    }
                    if (cycle == last) {
                        break;
                    }
                }
            }
            end = recoverEnd(tailer);
        }
        this.startOffset = start;
        this.endOffset = end;
        this.syncedEndOffset = end;
        this.appendedBytes = journalBytes();
        LOG.debug("{}: recovered offsets [{}, {}) in {} cycle files", partition, start, end, cycleByBaseOffset.size());
    }

    /**
     * The end offset: one backward read of the last record, cross-checked against the cycle map (the last record
     * must sit in the newest cycle that has records, at {@code base + sequence}). A crash around a roll can leave a
     * newest cycle file without records, or a backward read that does not reach the last record; then the newest
     * cycle with records is counted forward instead. A record whose offset contradicts its position is corruption.
     */
    private long recoverEnd(ExcerptTailer tailer) {
        Map.Entry<Long, Integer> newest = cycleByBaseOffset.lastEntry();
        tailer.direction(TailerDirection.BACKWARD).toEnd();
        long lastOffset = -1;
        long lastIndex = -1;
        try (DocumentContext dc = tailer.readingDocument()) {
            if (dc.isPresent() && !dc.isMetaData()) {
                lastOffset = RecordCodec.readOffset(dc.wire().bytes());
                lastIndex = dc.index();
            }
        }
        tailer.direction(TailerDirection.FORWARD);
        if (newest == null) {
            if (lastOffset >= 0) {
                throw new SluiceException.JournalException(partition + ": the journal holds offset " + lastOffset
                        + " but no cycle file has a readable first record", null);
            }
            return 0;
        }
        if (lastOffset >= 0 && rollCycle.toCycle(lastIndex) == newest.getValue()
                && lastOffset == newest.getKey() + rollCycle.toSequenceNumber(lastIndex)) {
            return lastOffset + 1;
        }
        // count forward through the newest cycle with records
        long count = 0;
        long expected = newest.getKey();
        if (!tailer.moveToIndex(rollCycle.toIndex(newest.getValue(), 0))) {
            throw new SluiceException.JournalException(partition + ": cannot read cycle " + newest.getValue(), null);
        }
        while (true) {
            try (DocumentContext dc = tailer.readingDocument()) {
                if (!dc.isPresent() || rollCycle.toCycle(dc.index()) != newest.getValue()) {
                    break;
                }
                if (dc.isMetaData()) {
                    continue;
                }
                long offset = RecordCodec.readOffset(dc.wire().bytes());
                if (offset != expected) {
                    throw new SluiceException.JournalException(partition + ": offsets are not dense in cycle "
                            + newest.getValue() + ": expected " + expected + ", found " + offset, null);
                }
                expected++;
                count++;
            }
        }
        LOG.warn("{}: the last record read backwards (offset {}, index {}) disagrees with the cycle map; counted {} records "
                + "forward in the newest cycle with records: end offset {}", partition, lastOffset,
                lastIndex < 0 ? "none" : Long.toHexString(lastIndex), count, expected);
        return expected;
    }

    private int nextCycle(int cycle) {
        try {
            int next = queue.nextCycle(cycle, TailerDirection.FORWARD);
            return next < 0 ? Integer.MAX_VALUE : next;
        } catch (java.text.ParseException e) {
            throw new SluiceException.JournalException("cannot list journal cycles in " + dir, e);
        }
    }

    private boolean readBase(ExcerptTailer tailer, int cycle) {
        try (DocumentContext dc = tailer.readingDocument()) {
            if (!dc.isPresent()) {
                return false;
            }
            long index = dc.index();
            if (rollCycle.toCycle(index) != cycle) {
                return false;
            }
            long offset = RecordCodec.readOffset(dc.wire().bytes());
            cycleByBaseOffset.put(offset - rollCycle.toSequenceNumber(index), cycle);
            return true;
        }
    }

    public TopicPartition partition() {
        return partition;
    }

    /**
     * Appends one event, assigning it the next offset. Journal writer thread only.
     *
     * @throws SluiceException.JournalException if the disk is (nearly) full or the write failed; nothing was appended
     */
    public long append(RingSlot slot) {
        checkDiskSpace();
        long offset = endOffset;
        DocumentContext dc = null;
        try {
            if (appender == null) {
                appender = queue.createAppender();
                // only the journal writer thread ever touches it: skip Chronicle's per-call owner check
                appender.singleThreadedCheckDisabled(true);
            }
            dc = appender.writingDocument();
            Bytes<?> bytes = dc.wire().bytes();
            long before = bytes.writePosition();
            RecordCodec.write(bytes, offset, slot);
            appendedBytes += bytes.writePosition() - before;
            dc.close();
        } catch (Throwable t) {
            // includes the InternalError the JVM raises when a mapped write hits a full disk (SIGBUS)
            if (dc != null) {
                try {
                    dc.rollbackOnClose();
                    dc.close();
                } catch (Throwable ignored) {
                    // the appender is discarded below; its state no longer matters
                }
            }
            discardAppender();
            throw new SluiceException.JournalException(partition + ": journal append failed: " + t, t);
        }
        // lastIndexAppended() can scan the index, so ask for it only when a new cycle file has begun
        int cycle = appender.cycle();
        if (cycle != lastCycle) {
            long index = appender.lastIndexAppended();
            cycleByBaseOffset.put(offset - rollCycle.toSequenceNumber(index), rollCycle.toCycle(index));
            lastCycle = cycle;
            unsyncedCycles.add(cycle);
            directoryUnsynced = true;
            if (unsyncedCycles.size() > MAX_UNSYNCED_CYCLES) {
                syncQuietly(); // a JOURNAL-only partition never syncs: keep the set bounded
            }
        }
        endOffset = offset + 1; // volatile write publishes the record to readers
        return offset;
    }

    /** statfs at most every diskCheckIntervalBytes appended, and on every append while the disk is full. */
    private void checkDiskSpace() {
        if (!diskFull && appendedBytes - bytesAtLastDiskCheck < diskCheckIntervalBytes) {
            return;
        }
        bytesAtLastDiskCheck = appendedBytes;
        long usable;
        try {
            usable = fileStore.getUsableSpace();
        } catch (IOException e) {
            throw new SluiceException.JournalException(partition + ": cannot read free disk space: " + e, e);
        }
        boolean full = usable < minFreeDiskBytes;
        if (full != diskFull) {
            diskFull = full;
            if (full) {
                LOG.error("{}: only {} bytes free on the journal disk, below minFreeDiskBytes={}: refusing appends until space returns",
                        partition, usable, minFreeDiskBytes);
            } else {
                LOG.info("{}: disk space is back ({} bytes free): accepting appends", partition, usable);
            }
        }
        if (full) {
            throw new SluiceException.JournalException(partition + ": disk full: " + usable
                    + " bytes free on the journal disk, below minFreeDiskBytes=" + minFreeDiskBytes, null);
        }
    }

    private void discardAppender() {
        if (appender != null) {
            try {
                appender.close();
            } catch (Throwable t) {
                LOG.warn("{}: closing a failed appender: {}", partition, t.toString());
            }
            appender = null;
        }
    }

    /**
     * Forces everything appended since the last successful sync to disk: every cycle file written since then (a
     * batch can span a roll), and the directory when a cycle file was created. Independent of the appender, so it
     * also covers the records before an append that failed (and discarded the appender). An fsync of the file is an
     * msync of all its mapped chunks on Linux: the page cache holds the pages written through the mapping.
     * Journal writer thread only.
     *
     * @throws SluiceException.JournalException if the data could not be forced; it stays pending for the next sync
     */
    public void sync() {
        long end = endOffset;
        if (end == syncedEndOffset && !directoryUnsynced) {
            return;
        }
        try {
            for (int cycle : unsyncedCycles) {
                if (cycle != lastCycle && !cycleByBaseOffset.containsValue(cycle)) {
                    continue; // retention removed it: nothing of it is acknowledged any more
                }
                DurableFiles.fsync(cycleFile(cycle));
            }
            if (directoryUnsynced) {
                DurableFiles.fsyncDirectory(dir);
            }
        } catch (IOException | RuntimeException e) {
            throw new SluiceException.JournalException(partition + ": sync of " + unsyncedCycles + " failed: " + e, e);
        }
        directoryUnsynced = false;
        unsyncedCycles.clear();
        if (lastCycle != Integer.MIN_VALUE) {
            unsyncedCycles.add(lastCycle); // the current cycle keeps receiving appends
        }
        syncedEndOffset = end;
    }

    private void syncQuietly() {
        try {
            sync();
        } catch (SluiceException.JournalException e) {
            LOG.warn("{}: background sync failed (retried at the next sync): {}", partition, e.getMessage());
        }
    }

    /** Offsets below this are forced to disk (survive an OS crash). */
    public long syncedEndOffset() {
        return syncedEndOffset;
    }

    public long endOffset() {
        return endOffset;
    }

    public long startOffset() {
        return startOffset;
    }

    /** Approximate bytes appended (record bytes, excluding Chronicle's headers and index). */
    public long appendedBytes() {
        return appendedBytes;
    }

    /** Chronicle index of {@code offset}, or -1 if it is not retained. */
    long indexOf(long offset) {
        Map.Entry<Long, Integer> e = cycleByBaseOffset.floorEntry(offset);
        if (e == null) {
            return -1;
        }
        return rollCycle.toIndex(e.getValue(), offset - e.getKey());
    }

    public JournalReader openReader() {
        return new JournalReader(this);
    }

    ExcerptTailer createTailer() {
        return queue.createTailer();
    }

    /** Finds the first offset whose timestamp is >= epochMillis, assuming broker-assigned (non-decreasing) timestamps. */
    long offsetForTimestamp(long epochMillis) {
        long lo = startOffset;
        long hi = endOffset;
        try (ExcerptTailer tailer = queue.createTailer()) {
            while (lo < hi) {
                long mid = (lo + hi) >>> 1;
                long ts = timestampAt(tailer, mid);
                if (ts < epochMillis) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
        }
        return lo;
    }

    private long timestampAt(ExcerptTailer tailer, long offset) {
        long index = indexOf(offset);
        if (index < 0 || !tailer.moveToIndex(index)) {
            return Long.MIN_VALUE;
        }
        try (DocumentContext dc = tailer.readingDocument()) {
            return dc.isPresent() ? RecordCodec.readTimestamp(dc.wire().bytes()) : Long.MIN_VALUE;
        }
    }

    /**
     * Bytes written to the retained cycle files: Chronicle's write position in each (records, headers and index), not
     * the file length — cycle files are preallocated sparse files, far longer than what they hold.
     */
    public long journalBytes() {
        long total = 0;
        for (int cycle : cycleByBaseOffset.values()) {
            total += writtenBytes(cycle);
        }
        return total;
    }

    private long writtenBytes(int cycle) {
        SingleChronicleQueueStore store = queue.storeForCycle(cycle, queue.epoch(), false, null);
        if (store == null) {
            return 0;
        }
        try {
            return store.writePosition();
        } finally {
            queue.closeStore(store);
        }
    }

    private Path cycleFile(int cycle) {
        return dir.resolve(fileNames.format(Instant.ofEpochMilli((long) cycle * rollCycle.lengthInMillis()))
                + SingleChronicleQueue.SUFFIX);
    }

    /**
     * Deletes whole cycle files, oldest first, whose events are all older than {@code retentionMillis} or while the
     * partition exceeds {@code retentionBytes}. Never deletes the newest file, so offsets stay dense across restarts.
     * Housekeeper thread only.
     *
     * @return the number of files deleted
     */
    public int applyRetention(long nowMillis, long retentionMillis, long retentionBytes) {
        int deleted = 0;
        long bytes = retentionBytes > 0 ? journalBytes() : 0;
        while (cycleByBaseOffset.size() > 1) {
            Map.Entry<Long, Integer> oldest = cycleByBaseOffset.firstEntry();
            int cycle = oldest.getValue();
            long cycleEnd = ((long) cycle + 1) * rollCycle.lengthInMillis();
            boolean expired = retentionMillis > 0 && cycleEnd <= nowMillis - retentionMillis;
            boolean oversized = retentionBytes > 0 && bytes > retentionBytes;
            long cycleBytes = retentionBytes > 0 ? writtenBytes(cycle) : 0;
            if (!expired && !oversized) {
                break;
            }
            Path file = cycleFile(cycle);
            Long nextBase = cycleByBaseOffset.higherKey(oldest.getKey());
            // move the start first so readers stop mapping offsets into the file before it disappears
            startOffset = nextBase;
            cycleByBaseOffset.remove(oldest.getKey());
            try {
                Files.deleteIfExists(file);
                bytes -= cycleBytes;
                deleted++;
                LOG.info("{}: retention removed {} (offsets below {})", partition, file.getFileName(), nextBase);
            } catch (IOException e) {
                LOG.warn("{}: retention could not delete {}: {}", partition, file, e.toString());
                break;
            }
        }
        if (deleted > 0) {
            queue.refreshDirectoryListing();
        }
        return deleted;
    }

    /** Reads the record at the current tailer position, or null at the end. */
    static ConsumerRecord readNext(ExcerptTailer tailer, TopicPartition tp) {
        while (true) {
            try (DocumentContext dc = tailer.readingDocument()) {
                if (!dc.isPresent()) {
                    return null;
                }
                if (dc.isMetaData()) {
                    continue;
                }
                return RecordCodec.read(dc.wire().bytes(), tp.topic(), tp.partition());
            }
        }
    }

    /** Releases the appender; journal writer thread only (Chronicle appenders are bound to their thread). */
    public void closeAppender() {
        if (appender != null) {
            appender.close();
            appender = null;
        }
    }

    /** Closes the queue. Call after the journal writer stopped. */
    @Override
    public void close() {
        if (appender != null) {
            appender.singleThreadedCheckReset();
            appender.close();
            appender = null;
        }
        queue.close();
    }

    public Path directory() {
        return dir;
    }
}
