package io.sluice.core.internal.bus;

import com.lmax.disruptor.RingBuffer;
import io.sluice.core.Acks;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.EpochClock;
import io.sluice.core.Header;
import io.sluice.core.RollCycleType;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.journal.JournalFormat;
import io.sluice.core.internal.journal.JournalReader;
import io.sluice.core.internal.journal.PartitionJournal;
import io.sluice.records.RecordBatchReader;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;
import org.HdrHistogram.SingleWriterRecorder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The journal stores record batches: a ring batch becomes one Chronicle document (bounded in bytes), reads start at
 * any offset inside a batch, a damaged batch is reported by partition and offset, and a directory of the old
 * per-event format is refused.
 */
class BatchJournalTest {
    @TempDir
    Path dir;
    final TopicPartition tp = new TopicPartition("t", 0);
    final AtomicLong now = new AtomicLong(1_699_999_800_000L); // on a 5-minute boundary
    final EpochClock clock = now::get;

    private static void fill(RingSlot slot, long n, List<Header> headers, SendCallbackLog log) {
        byte[] key = n % 3 == 0 ? null : ("k" + n).getBytes(StandardCharsets.UTF_8);
        slot.fill("t", 0, key, value(n), headers, timestamp(n), Acks.JOURNAL, log == null ? null : log::add);
    }

    private static byte[] value(long n) {
        return ("value-" + n + "-" + "x".repeat((int) (n % 17))).getBytes(StandardCharsets.UTF_8);
    }

    private static long timestamp(long n) {
        return 1_000 + n * 10;
    }

    private static RingSlot slot(long n) {
        RingSlot s = new RingSlot();
        fill(s, n, n % 4 == 1 ? List.of(Header.of("h", "v" + n)) : List.of(), null);
        return s;
    }

    /** Writes batches of the given sizes, moving the clock forward by {@code rollBefore[b]} minutes before batch b. */
    private long writeBatches(PartitionJournal journal, long first, int[] sizes, int[] rollBefore) {
        long next = first;
        for (int b = 0; b < sizes.length; b++) {
            now.addAndGet(TimeUnit.MINUTES.toMillis(rollBefore[b]));
            journal.beginBatch();
            for (int i = 0; i < sizes[b]; i++) {
                assertThat(journal.add(slot(next))).isEqualTo(next);
                next++;
            }
            assertThat(journal.commitBatch()).isEqualTo(sizes[b]);
            assertThat(journal.endOffset()).isEqualTo(next);
        }
        return next;
    }

    /** From every offset, with several record limits: exactly the records from there to the end, in order. */
    private static void readFromEveryOffset(PartitionJournal journal, long end) {
        for (int limit : new int[]{1, 2, 3, 1000}) {
            try (JournalReader reader = journal.openReader()) {
                for (long from = 0; from <= end; from++) {
                    reader.seek(from);
                    List<ConsumerRecord> records = new ArrayList<>();
                    while (reader.read(limit, 1 << 20, records::add) > 0) {
                        assertThat(reader.position()).isEqualTo(from + records.size());
                    }
                    assertThat(records).hasSize((int) (end - from));
                    for (int i = 0; i < records.size(); i++) {
                        ConsumerRecord r = records.get(i);
                        long n = from + i;
                        assertThat(r.offset()).isEqualTo(n);
                        assertThat(r.value()).isEqualTo(value(n));
                        assertThat(r.timestamp()).isEqualTo(timestamp(n));
                        assertThat(r.key()).isEqualTo(n % 3 == 0 ? null : ("k" + n).getBytes(StandardCharsets.UTF_8));
                        assertThat(r.headers()).isEqualTo(n % 4 == 1 ? List.of(Header.of("h", "v" + n)) : List.of());
                    }
                }
            }
        }
    }

    @Test
    void readsStartAtEveryOffsetInsideAndAcrossBatchesAndRollCycles() {
        int[] sizes = {1, 3, 7, 1, 10, 4, 2, 5, 1};
        int[] rolls = {0, 0, 0, 0, 5, 0, 10, 0, 5}; // new cycle files before batches 4, 6 (after an empty cycle) and 8
        long end;
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            end = writeBatches(journal, 0, sizes, rolls);
            readFromEveryOffset(journal, end);
            try (JournalReader reader = journal.openReader()) {
                for (long o = 0; o < end; o++) {
                    assertThat(reader.offsetForTimestamp(timestamp(o))).isEqualTo(o);
                    assertThat(reader.offsetForTimestamp(timestamp(o) - 5)).isEqualTo(o);
                }
                assertThat(reader.offsetForTimestamp(timestamp(end))).isEqualTo(end);
            }
        }
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            assertThat(journal.startOffset()).isZero();
            assertThat(journal.endOffset()).as("recovered end: last batch's base + count").isEqualTo(end);
            long more = writeBatches(journal, end, new int[]{6, 1}, new int[]{0, 5});
            readFromEveryOffset(journal, more);
        }
    }

    @Test
    void aSinkThatThrowsInsideABatchLeavesTheReaderAtTheFirstUndeliveredOffset() {
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0);
             JournalReader reader = journal.openReader()) {
            writeBatches(journal, 0, new int[]{3, 7, 2}, new int[3]);
            List<Long> seen = new ArrayList<>();
            assertThatThrownBy(() -> reader.read(100, 1 << 20, r -> {
                if (r.offset() == 5) {
                    throw new IllegalStateException("application failure at 5");
                }
                seen.add(r.offset());
            })).hasMessageContaining("application failure at 5");
            assertThat(reader.position()).isEqualTo(5);
            reader.read(100, 1 << 20, r -> seen.add(r.offset()));
            assertThat(seen).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L);
        }
    }

    @Test
    void aFlippedByteInAClosedJournalIsReportedWithPartitionAndOffset() throws Exception {
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            writeBatches(journal, 0, new int[]{5, 5, 5, 5, 5}, new int[5]);
        }
        // value-17 sits in the fourth batch, offsets 15..19
        flipByteOf(cycleFiles().get(0), "value-17-".getBytes(StandardCharsets.UTF_8));
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0);
             JournalReader reader = journal.openReader()) {
            assertThat(journal.endOffset()).isEqualTo(25);
            List<ConsumerRecord> read = new ArrayList<>();
            assertThatThrownBy(() -> {
                while (reader.read(1000, 1 << 20, read::add) > 0) {
                    // read until the damaged batch
                }
            }).isInstanceOfSatisfying(SluiceException.CorruptRecordException.class, e -> {
                assertThat(e.partition()).isEqualTo(tp);
                assertThat(e.offset()).isEqualTo(15);
                assertThat(e.code()).isEqualTo(SluiceException.Code.CORRUPT_RECORD);
                assertThat(e.getMessage()).contains("t-0", "offset 15", "CRC32C");
            });
            assertThat(read).hasSize(15); // the sound batches before it were delivered, nothing of the damaged one

            reader.seek(17);
            assertThatThrownBy(() -> reader.read(1000, 1 << 20, read::add))
                    .isInstanceOfSatisfying(SluiceException.CorruptRecordException.class,
                            e -> assertThat(e.getMessage()).contains("t-0", "offset 17"));
            reader.seek(20);
            List<ConsumerRecord> after = new ArrayList<>();
            reader.read(1000, 1 << 20, after::add);
            assertThat(after).extracting(ConsumerRecord::offset).containsExactly(20L, 21L, 22L, 23L, 24L);
        }
    }

    private static void flipByteOf(Path file, byte[] needle) throws Exception {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            byte[] head = new byte[(int) Math.min(raf.length(), 4 << 20)];
            raf.readFully(head);
            int at = indexOf(head, needle);
            assertThat(at).as("the record's bytes in %s", file).isNotNegative();
            raf.seek(at + 2);
            raf.write(head[at + 2] ^ 0x01);
        }
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    @Test
    void aDirectoryOfTheOldPerEventFormatIsRefusedNamingBothVersions() throws Exception {
        // format 1: one document per event (offset, timestamp, ... little-endian) and no journal.format file
        try (SingleChronicleQueue q = SingleChronicleQueueBuilder.binary(dir).rollCycle(RollCycles.FIVE_MINUTELY)
                .timeProvider(now::get).build();
             ExcerptAppender appender = q.createAppender()) {
            try (DocumentContext dc = appender.writingDocument()) {
                dc.wire().bytes().writeLong(0L).writeLong(1L).writeInt(-1).writeShort((short) 0).writeInt(1).writeByte((byte) 'x');
            }
        }
        assertThatThrownBy(() -> new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0))
                .isInstanceOf(SluiceException.JournalException.class)
                .hasMessageContaining("t-0")
                .hasMessageContaining("format 1")
                .hasMessageContaining("format 2");
        assertThat(dir.resolve(JournalFormat.FILE)).doesNotExist(); // refused, not converted half-way

        Files.writeString(dir.resolve(JournalFormat.FILE), "format=3\n");
        assertThatThrownBy(() -> new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0))
                .isInstanceOf(SluiceException.JournalException.class)
                .hasMessageContaining("format 3")
                .hasMessageContaining("format 2");
    }

    @Test
    void aNewDirectoryIsMarkedWithTheCurrentFormat() throws Exception {
        Path partitionDir = dir.resolve("p0");
        try (PartitionJournal journal = new PartitionJournal(tp, partitionDir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            journal.append(slot(0));
        }
        assertThat(Files.readString(partitionDir.resolve(JournalFormat.FILE)).trim()).isEqualTo("format=2");
        try (PartitionJournal journal = new PartitionJournal(tp, partitionDir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            assertThat(journal.endOffset()).isEqualTo(1);
        }
    }

    /** Collects acknowledgements in order. */
    static final class SendCallbackLog {
        final List<long[]> acks = new ArrayList<>();
        final List<Throwable> errors = new ArrayList<>();

        void add(int partition, long offset, Throwable error) {
            if (error == null) {
                acks.add(new long[]{offset});
            } else {
                errors.add(error);
            }
        }
    }

    @Test
    void aRingBatchBecomesOneDocumentBoundedInBytesAndABadEventFailsAlone() throws Exception {
        int events = 40;
        int maxBatchBytes = 1024;
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            RingBuffer<RingSlot> ring = RingBuffer.createSingleProducer(RingSlot::new, 64);
            JournalHandler handler = new JournalHandler(journal, ring, new SingleWriterRecorder(3),
                    new Wakers(), maxBatchBytes);
            SendCallbackLog log = new SendCallbackLog();
            // one ring batch of 40 events; the 8th cannot be encoded (null headers)
            for (int i = 0; i < events; i++) {
                fill(ring.get(i), i, i == 7 ? null : List.of(), log);
            }
            for (int i = 0; i < events; i++) {
                handler.onEvent(ring.get(i), i, i == events - 1);
            }
            assertThat(log.errors).hasSize(1);
            assertThat(log.acks).extracting(a -> a[0]).containsExactlyElementsOf(
                    java.util.stream.LongStream.range(0, events - 1).boxed().toList());
            List<long[]> documents = documents(); // {base, count, bytes}
            assertThat(documents).hasSizeGreaterThan(1);
            assertThat(documents).allSatisfy(d -> assertThat(d[2]).isLessThanOrEqualTo(maxBatchBytes));
            assertThat(documents.stream().mapToLong(d -> d[1]).sum()).isEqualTo(events - 1);

            // the same again with the default bound: the whole ring batch is one document
            JournalHandler unbounded = new JournalHandler(journal, ring, new SingleWriterRecorder(3), new Wakers());
            for (int i = events; i < 2 * events; i++) {
                fill(ring.get(i), i, List.of(), log);
            }
            for (int i = events; i < 2 * events; i++) {
                unbounded.onEvent(ring.get(i), i, i == 2 * events - 1);
            }
            List<long[]> after = documents();
            assertThat(after).hasSize(documents.size() + 1);
            long[] last = after.get(after.size() - 1);
            assertThat(last[0]).isEqualTo(events - 1);
            assertThat(last[1]).isEqualTo(events);
            assertThat(journal.endOffset()).isEqualTo(2L * events - 1);
        }
    }

    /** Every document of the journal as {base offset, record count, bytes}, each checked (CRC, density). */
    private List<long[]> documents() {
        List<long[]> docs = new ArrayList<>();
        RecordBatchReader cursor = new RecordBatchReader();
        try (SingleChronicleQueue q = SingleChronicleQueueBuilder.binary(dir).rollCycle(RollCycles.FIVE_MINUTELY)
                .timeProvider(now::get).build();
             ExcerptTailer tailer = q.createTailer()) {
            long expected = 0;
            while (true) {
                try (DocumentContext dc = tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        break;
                    }
                    Bytes<?> in = dc.wire().bytes();
                    byte[] stored = new byte[(int) in.readRemaining()];
                    in.read(in.readPosition(), stored, 0, stored.length);
                    cursor.open(java.nio.ByteBuffer.wrap(stored), 0, stored.length, true); // throws if damaged
                    assertThat(cursor.baseOffset()).isEqualTo(expected);
                    expected = cursor.nextOffset();
                    docs.add(new long[]{cursor.baseOffset(), cursor.recordCount(), in.readRemaining()});
                }
            }
        }
        return docs;
    }

    private List<Path> cycleFiles() throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(f -> f.getFileName().toString().endsWith(".cq4")).sorted().toList();
        }
    }
}
