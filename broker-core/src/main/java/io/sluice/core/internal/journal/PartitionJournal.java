package io.sluice.core.internal.journal;

import io.sluice.core.EpochClock;
import io.sluice.core.RollCycleType;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.bus.RingSlot;
import io.sluice.records.MalformedBatchException;
import io.sluice.records.RecordBatch;
import io.sluice.records.RecordBatchReader;
import io.sluice.records.RecordBatchWriter;
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
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The durable log of one partition: a Chronicle Queue whose documents are record batches (Kafka RecordBatch v2, see
 * record-batch's {@link RecordBatch} and docs/journal-format.md), with dense offsets per event.
 *
 * <p><b>Threading.</b> {@link #append} and {@link #sync} are called only by the partition's journal writer thread
 * (single writer). {@link #endOffset()} and {@link #startOffset()} are safe from any thread. Readers
 * ({@link JournalReader}) each own a tailer and read concurrently with the writer. Retention runs on the
 * housekeeper thread and never touches the file being appended to.
 *
 * <p><b>Batches.</b> The writer opens a batch ({@link #beginBatch}), adds events ({@link #add}) and commits it
 * ({@link #commitBatch}): one Chronicle document. Until the commit the document is invisible to readers and to
 * recovery (Chronicle's header stays "being written"), so a crash never exposes part of a batch; the end offset
 * moves only after the commit.
 *
 * <p><b>Offsets.</b> Each batch stores its base offset and record count; offsets are dense across batches. Chronicle
 * indexes are (cycle, sequence) pairs, one per batch. The journal keeps a small map from each cycle's first offset to
 * its cycle (rebuilt on open from the first batch of each cycle file); within a cycle the batch holding offset
 * {@code o} is found through a {@link BatchIndex} (offset → batch, kept by the writer, rebuilt on open, bounded) and,
 * between its entries or without one, a galloping binary search over the sequence numbers, reading each probed
 * batch's base offset.
 *
 * <p><b>Format.</b> The directory carries {@value JournalFormat#FILE} naming its format version; a directory of
 * another version (format 1 stored one document per event) is refused on open.
 */
public final class PartitionJournal implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionJournal.class);

    static {
        ChronicleSwitches.disableTelemetry();
    }

    private final TopicPartition partition;
    private final Path dir;
    private final SingleChronicleQueue queue;
    private final RollCycle rollCycle;
    private final DateTimeFormatter fileNames;
    /** first offset of a cycle → cycle; written by the journal writer (and retention removes), read by readers. */
    private final ConcurrentSkipListMap<Long, Integer> cycleByBaseOffset = new ConcurrentSkipListMap<>();
    /** cycle → sequence number of its first batch (0 unless a crash left an unreadable entry before it) */
    private final java.util.concurrent.ConcurrentHashMap<Integer, Long> firstSequenceByCycle =
            new java.util.concurrent.ConcurrentHashMap<>();

    /** offset → batch, so a read by offset touches one batch (or a few, once the journal outgrows the index) */
    private final BatchIndex batchIndex = new BatchIndex();
    /** which batches a read checks the CRC32C of: recovered ones, once each while cached; never this journal's own */
    private final CheckedBatches checkedBatches = new CheckedBatches();
    private volatile long endOffset;
    /** wakes readers waiting for {@link #endOffset} to move; signalled by the journal writer after each batch */
    private final JournalProgress progress = new JournalProgress();
    private volatile long startOffset;
    private volatile long appendedBytes;

    private final long minFreeDiskBytes;
    private final long diskCheckIntervalBytes;
    private final java.nio.file.FileStore fileStore;

    /** end offset covered by the last successful {@link #sync()}: everything below it is on disk. */
    private volatile long syncedEndOffset;

    private static final int MAX_UNSYNCED_CYCLES = 8;

    /**
     * Default upper bound of one coalesced batch in bytes: the journal writer closes a document before a record would
     * take it past this (a single larger record still gets a batch of its own). 64 KiB, as a Kafka producer's batches
     * are tens of KiB: a read by offset walks the records of its batch up to its own by their length prefixes, one
     * cache miss each, so the bound keeps that walk to a few dozen records of 1 KiB (with 1 MiB it was up to 255, a
     * ring turn; docs/benchmarks.md, issue 22). A ring turn of small events (256 × 100 B) still fits in one document.
     */
    public static final int DEFAULT_MAX_BATCH_BYTES = 64 << 10;

    /** the pretoucher's handle on this journal ({@code journal.pretouch.bytes}), or null */
    private JournalPretoucher.Target pretouch;

    // journal-writer thread state
    private ExcerptAppender appender;
    /** where the last document ended in its cycle file, and that file (for {@link #pretouch}) */
    private long lastDocumentEnd;
    private Path lastCycleFile;
    private int lastCycle = Integer.MIN_VALUE;
    /** Chronicle sequence number of the last batch committed in {@link #lastCycle}, -1 when not known (ask Chronicle) */
    private long lastSequence = -1;
    /** cycles appended to since the last successful sync (usually one; two around a roll) */
    private final java.util.TreeSet<Integer> unsyncedCycles = new java.util.TreeSet<>();
    /** a cycle file was created since the last sync: its directory entry must be made durable too */
    private boolean directoryUnsynced;
    private long bytesAtLastDiskCheck = Long.MIN_VALUE / 2; // check on the first append
    private boolean diskFull;
    /**
     * The open batch is encoded into {@link #batchBuffer}, then copied into one Chronicle document when it is committed
     * (the codec writes ByteBuffers; a mapped document is not one). The buffer grows to the largest batch and shrinks
     * back after one above {@link #RETAINED_BATCH_BUFFER}, bounding an idle partition's memory.
     */
    private final RecordBatchWriter batchWriter = new RecordBatchWriter();
    private static final int INITIAL_BATCH_BUFFER = 16 * 1024;
    private static final int RETAINED_BATCH_BUFFER = 256 * 1024;
    private ByteBuffer batchBuffer = ByteBuffer.allocate(INITIAL_BATCH_BUFFER);
    /** where each record of the open batch starts in {@link #batchBuffer}: stored beside it ({@link RecordStarts}) */
    private int[] recordStarts = new int[256];
    /** the header of a producer's batch, rewritten in place before it is stored (journal writer thread) */
    private final RecordBatch producedHeader = new RecordBatch();
    /** read-side copy of stored headers for recovery (the opening thread) */
    private final StoredBatch recovered = new StoredBatch();

    public PartitionJournal(TopicPartition partition, Path dir, RollCycleType rollCycleType, EpochClock clock,
                            long minFreeDiskBytes) {
        this(partition, dir, rollCycleType, clock, minFreeDiskBytes, io.sluice.core.BrokerConfig.DEFAULT_JOURNAL_MAP_BYTES);
    }

    /** @param mapBytes how much of a cycle file is mapped at once ({@code journal.map.bytes}, Chronicle's block size) */
    public PartitionJournal(TopicPartition partition, Path dir, RollCycleType rollCycleType, EpochClock clock,
                            long minFreeDiskBytes, long mapBytes) {
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
        JournalFormat.checkOrCreate(partition, dir);
        this.queue = SingleChronicleQueueBuilder.binary(dir)
                .rollCycle(rollCycle)
                // every 4th document indexed (Chronicle's default: every 256th), capacity per cycle unchanged
                .indexSpacing(ChronicleSupport.indexSpacing(rollCycle))
                .indexCount(ChronicleSupport.indexCount(rollCycle))
                .timeProvider(ChronicleSupport.timeProvider(clock))
                // a writer killed mid-append leaves a locked header; recover it after 2 s instead of Chronicle's default
                .timeoutMS(2_000)
                // No Chronicle sync mode (SyncMode.NONE): durability is sync()'s fsync of the cycle files written
                // since the last one (Acks.SYNC). With SyncMode.SYNC, Chronicle also msync(MS_SYNC)ed every mapped
                // chunk it released, on whichever thread released it: a reader leaving a chunk, or the journal writer
                // moving on to the next one (docs/benchmarks.md item 13).
                .syncMode(SyncMode.NONE)
                // Chronicle maps a file in chunks of this size and unmaps a chunk nobody holds: a reader hopping
                // between chunks (reads by offset) paid an munmap, an mmap and page faults on most reads with
                // Chronicle's 64 MiB (docs/benchmarks.md item 15)
                .blockSize(mapBytes)
                .build();
        recover();
    }

    /** Rebuilds the cycle map and the end offset from what is on disk (after a clean close or a crash). */
    private void recover() {
        cycleByBaseOffset.clear();
        firstSequenceByCycle.clear();
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
            rebuildIndex(tailer);
        }
        this.startOffset = start;
        this.endOffset = end;
        this.syncedEndOffset = end;
        this.appendedBytes = journalBytes();
        LOG.debug("{}: recovered offsets [{}, {}) in {} cycle files", partition, start, end, cycleByBaseOffset.size());
    }

    /**
     * The end offset: one backward read of the last batch (its base offset + record count), cross-checked against the
     * cycle map (the last batch must sit in the newest cycle that has batches, at or after that cycle's first offset).
     * A crash around a roll can leave a newest cycle file without batches, or a backward read that does not reach the
     * last batch; then the newest cycle with batches is counted forward instead. A batch whose base offset contradicts
     * its position is corruption.
     */
    private long recoverEnd(ExcerptTailer tailer) {
        Map.Entry<Long, Integer> newest = cycleByBaseOffset.lastEntry();
        tailer.direction(TailerDirection.BACKWARD).toEnd();
        long lastEnd = -1;
        long lastBase = -1;
        long lastIndex = -1;
        try (DocumentContext dc = tailer.readingDocument()) {
            if (dc.isPresent() && !dc.isMetaData()) {
                RecordBatch header = checkedHeader(dc.wire().bytes());
                lastBase = header.baseOffset();
                lastEnd = header.nextOffset();
                lastIndex = dc.index();
            }
        }
        tailer.direction(TailerDirection.FORWARD);
        if (newest == null) {
            if (lastEnd >= 0) {
                throw new SluiceException.JournalException(partition + ": the journal holds offsets up to " + lastEnd
                        + " but no cycle file has a readable first batch", null);
            }
            return 0;
        }
        if (lastEnd >= 0 && rollCycle.toCycle(lastIndex) == newest.getValue() && lastBase >= newest.getKey()) {
            return lastEnd;
        }
        // count forward through the newest cycle with batches
        long batches = 0;
        long expected = newest.getKey();
        if (!tailer.moveToIndex(rollCycle.toIndex(newest.getValue(), firstSequenceByCycle.getOrDefault(newest.getValue(), 0L)))) {
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
                RecordBatch header = checkedHeader(dc.wire().bytes());
                long base = header.baseOffset();
                if (base != expected) {
                    throw new SluiceException.JournalException(partition + ": offsets are not dense in cycle "
                            + newest.getValue() + ": expected a batch at " + expected + ", found one at " + base, null);
                }
                expected += header.count();
                batches++;
            }
        }
        LOG.warn("{}: the last batch read backwards (end offset {}, index {}) disagrees with the cycle map; counted {} batches "
                + "forward in the newest cycle with batches: end offset {}", partition, lastEnd,
                lastIndex < 0 ? "none" : Long.toHexString(lastIndex), batches, expected);
        return expected;
    }

    /**
     * Refills the {@link BatchIndex} from the retained batches: one probe every {@link BatchIndex#interval()} batches
     * of each cycle (the interval doubles as the index fills), so at most about 2 × {@link BatchIndex#MAX_ENTRIES}
     * probes whatever the journal's size. A cycle whose batches cannot all be read is indexed up to there; reads
     * beyond fall back to the search.
     */
    private void rebuildIndex(ExcerptTailer tailer) {
        for (Map.Entry<Long, Integer> e : cycleByBaseOffset.entrySet()) {
            int cycle = e.getValue();
            long sequence = firstSequenceByCycle.getOrDefault(cycle, 0L);
            try {
                long base;
                while ((base = baseOffsetAt(tailer, cycle, sequence, -1, recovered)) >= 0) {
                    batchIndex.add(base, rollCycle.toIndex(cycle, sequence));
                    sequence += batchIndex.interval();
                }
            } catch (SluiceException.CorruptRecordException damaged) {
                LOG.warn("{}: offset index rebuilt only up to a damaged batch in cycle {}: {}", partition, cycle,
                        damaged.getMessage());
            }
        }
    }

    private RecordBatch checkedHeader(Bytes<?> in) {
        RecordBatch header = recovered.header(in);
        String problem = header.framingProblem(in.readRemaining());
        if (problem != null) {
            throw new SluiceException.CorruptRecordException(partition + ": a journal batch is damaged: " + problem,
                    partition, -1);
        }
        return header;
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
            if (dc.isMetaData()) {
                return false;
            }
            RecordBatch header = checkedHeader(dc.wire().bytes());
            firstSequenceByCycle.put(cycle, rollCycle.toSequenceNumber(index));
            cycleByBaseOffset.put(header.baseOffset(), cycle);
            return true;
        }
    }

    public TopicPartition partition() {
        return partition;
    }

    /**
     * Appends one event as a batch of its own, assigning it the next offset. Journal writer thread only.
     *
     * @throws SluiceException.JournalException if the disk is (nearly) full or the write failed; nothing was appended
     */
    public long append(RingSlot slot) {
        beginBatch();
        long offset;
        try {
            offset = add(slot);
        } catch (RuntimeException e) {
            abortBatch();
            throw e;
        }
        commitBatch();
        return offset;
    }

    /**
     * Opens a batch: one Chronicle document that {@link #add} fills and {@link #commitBatch} closes. Journal writer
     * thread only.
     *
     * @throws SluiceException.JournalException if the disk is (nearly) full or the document could not be opened
     */
    public void beginBatch() {
        if (batchWriter.isOpen()) {
            throw new IllegalStateException(partition + ": a batch is already open");
        }
        checkDiskSpace();
        batchWriter.begin(batchBuffer, 0);
    }

    /** Writes {@code batch[offset, offset + length)} as one document. */
    private void writeDocument(byte[] batch, int offset, int length) {
        checkDiskSpace();
        DocumentContext dc = null;
        try {
            if (appender == null) {
                appender = queue.createAppender();
                // only the journal writer thread ever touches it: skip Chronicle's per-call owner check
                appender.singleThreadedCheckDisabled(true);
            }
            dc = appender.writingDocument();
            dc.wire().bytes().write(batch, offset, length);
            lastDocumentEnd = dc.wire().bytes().writePosition();
            dc.close();
        } catch (Throwable t) {
            if (dc != null) {
                try {
                    dc.rollbackOnClose();
                    dc.close();
                } catch (Throwable ignored) {
                    // the appender is discarded below; its state no longer matters
                }
            }
            throw appendFailed(t);
        }
        appendedBytes += length;
    }

    /**
     * Appends a record batch a producer encoded (RecordBatch v2 of {@code count} records in {@code batch[0, length)},
     * a heap buffer, checked before it entered the ring: a {@code CheckedBatch}, or the embedded producer's own
     * writer) as one document, byte for byte but the base offset, which becomes the next offset (written into
     * {@code batch} too). No batch may be open. Journal writer thread only.
     *
     * @return the base offset: record {@code i} of the batch has offset {@code base + i}
     * @throws SluiceException.JournalException if the disk is (nearly) full or the write failed; nothing was appended
     */
    public long appendBatch(ByteBuffer batch, int length, int count) {
        if (batchWriter.isOpen()) {
            throw new IllegalStateException(partition + ": a batch is open");
        }
        long base = endOffset;
        producedHeader.wrap(batch, 0, length).baseOffset(base);
        writeDocument(batch.array(), batch.arrayOffset(), length);
        committed(base, count);
        return base;
    }

    /** True between {@link #beginBatch} and {@link #commitBatch}/{@link #abortBatch}. */
    public boolean batchOpen() {
        return batchWriter.isOpen();
    }

    /** Events added to the open batch. */
    public int batchCount() {
        return batchWriter.count();
    }

    /**
     * Bytes the open batch's document takes so far: the batch (header included) and, once it holds a record, the most
     * its record starts can take ({@link RecordStarts#MAX_SIZE}); 0 if none is open. What a bound on documents compares.
     */
    public long batchBytes() {
        return batchWriter.count() == 0 ? batchWriter.size() : batchWriter.size() + RecordStarts.MAX_SIZE;
    }

    /**
     * Adds one event to the open batch and returns the offset it will have once the batch is committed. Not visible
     * to readers (nor acknowledged) before {@link #commitBatch}. Journal writer thread only.
     *
     * @throws SluiceException.JournalException if the event could not be encoded: the batch is as before and stays
     *                                          open; or if the write itself failed ({@link #batchOpen()} is then
     *                                          false: the whole batch was discarded)
     */
    public long add(RingSlot slot) {
        if (!batchWriter.isOpen()) {
            throw new IllegalStateException(partition + ": no batch is open");
        }
        try {
            // room for the record and for the batch's record starts after it, written when it is committed
            ensureRoom(RecordBatchWriter.maxRecordSize(slot.keyLength(), slot.valueLength(), slot.headers())
                    + RecordStarts.MAX_SIZE);
            int record = batchWriter.count();
            if (record == recordStarts.length) {
                recordStarts = java.util.Arrays.copyOf(recordStarts, record * 2);
            }
            recordStarts[record] = batchWriter.position(); // the batch starts at 0 of the buffer
            batchWriter.append(slot.timestamp(), slot.keyBuffer(), slot.keyLength(), slot.valueBuffer(),
                    slot.valueLength(), slot.headers());
        } catch (RuntimeException e) {
            throw new SluiceException.JournalException(partition + ": event rejected by the journal: " + e, e);
        }
        return endOffset + batchWriter.count() - 1;
    }

    /**
     * Fills in the batch header and closes the document: from here the batch's events are in the mapped file (they
     * survive a process crash) and visible to readers. A batch with no event writes nothing. Journal writer thread
     * only.
     *
     * @return the number of events committed
     * @throws SluiceException.JournalException if the write failed; nothing of the batch was appended
     */
    public int commitBatch() {
        if (!batchWriter.isOpen()) {
            return 0;
        }
        int count = batchWriter.count();
        if (count == 0) {
            abortBatch();
            return 0;
        }
        long base = endOffset;
        int size = batchWriter.finish(base);
        int starts = RecordStarts.size(count); // add() kept room for them
        RecordStarts.write(batchBuffer, size, recordStarts, count);
        try {
            writeDocument(batchBuffer.array(), 0, size + starts);
        } finally {
            if (batchBuffer.capacity() > RETAINED_BATCH_BUFFER) {
                batchBuffer = ByteBuffer.allocate(INITIAL_BATCH_BUFFER);
            }
            if (recordStarts.length > 4096) {
                recordStarts = new int[256];
            }
        }
        committed(base, count);
        return count;
    }

    /** Grows the open batch's buffer, keeping what it holds, so that {@code recordBytes} more fit. */
    private void ensureRoom(int recordBytes) {
        if (batchWriter.remaining() >= recordBytes) {
            return;
        }
        int needed = batchWriter.position() + recordBytes;
        ByteBuffer grown = ByteBuffer.allocate(Math.max(needed, Math.min(Integer.MAX_VALUE - 8, batchBuffer.capacity() * 2)));
        grown.put(0, batchBuffer.array(), 0, batchWriter.position());
        batchBuffer = grown;
        batchWriter.moveTo(grown);
    }

    /** A document of {@code count} events from {@code base} was closed: track its cycle file and publish it. */
    private void committed(long base, int count) {
        // lastIndexAppended() can scan the index, so ask for it only when a new cycle file has begun (or after a failed
        // write); within a cycle, batches take consecutive sequence numbers
        int cycle = appender.cycle();
        if (cycle == lastCycle && lastSequence >= 0) {
            lastSequence++;
        } else {
            lastSequence = rollCycle.toSequenceNumber(appender.lastIndexAppended());
        }
        long index = rollCycle.toIndex(cycle, lastSequence);
        batchIndex.committed(base, index);
        checkedBatches.written(index);
        if (cycle != lastCycle) {
            if (!cycleByBaseOffset.containsValue(cycle)) { // the first batch of a new cycle file
                firstSequenceByCycle.put(cycle, lastSequence);
                cycleByBaseOffset.put(base, cycle);
            }
            lastCycle = cycle;
            lastCycleFile = pretouch == null ? null : cycleFile(cycle);
            unsyncedCycles.add(cycle);
            directoryUnsynced = true;
            if (unsyncedCycles.size() > MAX_UNSYNCED_CYCLES) {
                syncQuietly(); // a JOURNAL-only partition never syncs: keep the set bounded
            }
        }
        if (pretouch != null) {
            pretouch.appended(lastCycleFile, lastDocumentEnd);
        }
        endOffset = base + count; // volatile write publishes the batch to readers
    }

    /**
     * Lets {@code target}'s pretoucher keep the pages after this journal's end in the page cache
     * ({@link JournalPretoucher}); call before the first append. Closed with the journal.
     */
    public void pretouchWith(JournalPretoucher.Target target) {
        this.pretouch = target;
    }

    /** Discards the open batch, if any: its document is rolled back and nothing of it is stored. */
    public void abortBatch() {
        batchWriter.abandon();
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

    /**
     * The write itself failed (a SIGBUS on a full disk surfaces as an InternalError): the open document is discarded,
     * and so is the appender, whose state no longer matters; the next append starts a fresh one.
     */
    private SluiceException.JournalException appendFailed(Throwable t) {
        abortBatch();
        discardAppender();
        lastSequence = -1; // a fresh appender: ask Chronicle where the next batch lands
        return new SluiceException.JournalException(partition + ": journal append failed: " + t, t);
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

    /** Readers waiting for this journal to grow park on this; the journal writer signals it after each batch. */
    public JournalProgress progress() {
        return progress;
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

    /**
     * Chronicle index of the batch holding {@code offset}, or -1 if it is not retained. Moves {@code tailer}: the
     * {@link BatchIndex} gives the batches around the offset (while it holds every batch: the one batch, and nothing is
     * read); between them, or from the cycle's first batch without a hint, a galloping then binary search over the
     * cycle's sequence numbers, reading the base offset of each probed batch (its header copied into
     * {@code scratch}, the caller's).
     */
    long documentIndexOf(ExcerptTailer tailer, long offset, StoredBatch scratch) {
        Map.Entry<Long, Integer> e = cycleByBaseOffset.floorEntry(offset);
        if (e == null) {
            return -1;
        }
        int cycle = e.getValue();
        long lo = firstSequenceByCycle.getOrDefault(cycle, 0L); // base(lo) <= offset: the cycle's first batch
        long below = batchIndex.floorIndex(offset);
        if (below >= 0 && rollCycle.toCycle(below) == cycle) {
            lo = Math.max(lo, rollCycle.toSequenceNumber(below));
        }
        long above = batchIndex.higherIndex(offset);
        long hi = above >= 0 && rollCycle.toCycle(above) == cycle ? rollCycle.toSequenceNumber(above) : -1;
        long step = 1;
        while (hi < 0) {
            long probe = lo + step;
            long base = baseOffsetAt(tailer, cycle, probe, offset, scratch);
            if (base < 0 || base > offset) {
                hi = probe;
            } else {
                lo = probe;
                step <<= 1;
            }
        }
        while (hi - lo > 1) { // base(lo) <= offset < base(hi), or hi is past the cycle's last batch
            long mid = (lo + hi) >>> 1;
            long base = baseOffsetAt(tailer, cycle, mid, offset, scratch);
            if (base >= 0 && base <= offset) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return rollCycle.toIndex(cycle, lo);
    }

    /**
     * Base offset of the batch at (cycle, sequence), or -1 if there is none. A batch whose framing is damaged is a
     * {@link SluiceException.CorruptRecordException} naming the offset being looked for.
     */
    private long baseOffsetAt(ExcerptTailer tailer, int cycle, long sequence, long soughtOffset, StoredBatch scratch) {
        long index = rollCycle.toIndex(cycle, sequence);
        if (!tailer.moveToIndex(index)) {
            return -1;
        }
        try (DocumentContext dc = tailer.readingDocument()) {
            if (!dc.isPresent() || dc.index() != index) {
                return -1;
            }
            Bytes<?> in = dc.wire().bytes();
            RecordBatch header = scratch.header(in);
            String problem = header.framingProblem(in.readRemaining());
            if (problem != null) {
                throw new SluiceException.CorruptRecordException(partition + ": looking for offset " + soughtOffset
                        + " in " + dir + ", a journal batch is damaged: " + problem, partition, soughtOffset);
            }
            return header.baseOffset();
        }
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
        StoredBatch scratch = new StoredBatch();
        RecordBatchReader cursor = new RecordBatchReader();
        try (ExcerptTailer tailer = queue.createTailer()) {
            while (lo < hi) {
                long mid = (lo + hi) >>> 1;
                long ts = timestampAt(tailer, mid, scratch, cursor);
                if (ts < epochMillis) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
        }
        return lo;
    }

    private long timestampAt(ExcerptTailer tailer, long offset, StoredBatch scratch, RecordBatchReader cursor) {
        long index = documentIndexOf(tailer, offset, scratch);
        if (index < 0 || !tailer.moveToIndex(index)) {
            return Long.MIN_VALUE;
        }
        try (DocumentContext dc = tailer.readingDocument()) {
            if (!dc.isPresent()) {
                return Long.MIN_VALUE;
            }
            ByteBuffer batch = scratch.view(dc.wire().bytes());
            try {
                openBatch(cursor, batch, dc.index());
                while (cursor.hasNext() && cursor.peekOffset() < offset) {
                    cursor.skip();
                }
                if (!cursor.hasNext()) {
                    return Long.MIN_VALUE;
                }
                cursor.advance();
                return cursor.timestamp();
            } catch (MalformedBatchException e) {
                throw corrupt(offset, e.getMessage());
            } finally {
                scratch.release();
            }
        }
    }

    /**
     * Opens the stored batch at Chronicle {@code index} (in {@code batch[0, limit)}) on {@code cursor}: its framing
     * always, its CRC32C if {@link CheckedBatches} says so (a batch recovered from disk and not yet found sound).
     *
     * @throws MalformedBatchException if the framing or the CRC32C is wrong
     */
    void openBatch(RecordBatchReader cursor, ByteBuffer batch, long index) {
        boolean check = checkedBatches.needsCheck(index);
        cursor.open(batch, 0, batch.limit(), check);
        if (check) {
            checkedBatches.sound(index);
        }
    }

    SluiceException.CorruptRecordException corrupt(long offset, String problem) {
        return new SluiceException.CorruptRecordException(partition + ": the journal batch holding offset " + offset
                + " in " + dir + " is damaged: " + problem, partition, offset);
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
            firstSequenceByCycle.remove(cycle);
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

    /** Releases the appender; journal writer thread only (Chronicle appenders are bound to their thread). */
    public void closeAppender() {
        abortBatch();
        if (appender != null) {
            appender.close();
            appender = null;
        }
    }

    /** Closes the queue. Call after the journal writer stopped. */
    @Override
    public void close() {
        if (pretouch != null) {
            pretouch.close();
        }
        abortBatch();
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
