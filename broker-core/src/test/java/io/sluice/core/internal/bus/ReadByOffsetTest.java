package io.sluice.core.internal.bus;

import io.sluice.core.Acks;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.EpochClock;
import io.sluice.core.RollCycleType;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.journal.JournalReader;
import io.sluice.core.internal.journal.PartitionJournal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A read by offset lands on its own record, wherever its batch is: with batches of different sizes, aborted batches
 * between them, rolls to new cycle files, more batches than the offset index holds one by one, and after a restart
 * (the index rebuilt from the files); and wherever its record is in a large batch, read in place in the mapped file.
 */
class ReadByOffsetTest {
    private static final int BATCHES = 9_000; // past the offset index's 8,192 entries: it thins to every other batch

    @TempDir
    Path dir;
    final TopicPartition tp = new TopicPartition("t", 0);
    final AtomicLong now = new AtomicLong(1_699_999_800_000L);
    final EpochClock clock = now::get;

    private static RingSlot slot(long offset) {
        RingSlot s = new RingSlot();
        s.fill("t", 0, null, ("v" + offset).getBytes(StandardCharsets.UTF_8), List.of(), 1L, Acks.JOURNAL, null);
        return s;
    }

    private void appendBatches(PartitionJournal journal, int batches, SplittableRandom random) {
        for (int b = 0; b < batches; b++) {
            if (b % 1_000 == 999) {
                journal.beginBatch();
                journal.add(slot(-1));
                journal.abortBatch(); // stores nothing, takes no offset
            }
            if (b % 3_000 == 2_999) {
                now.addAndGet(TimeUnit.MINUTES.toMillis(5)); // the next batch rolls to a new cycle file
            }
            journal.beginBatch();
            int events = 1 + random.nextInt(4);
            for (int i = 0; i < events; i++) {
                journal.add(slot(journal.endOffset() + i));
            }
            journal.commitBatch();
        }
    }

    private static void assertEveryOffsetReadsItsOwnRecord(PartitionJournal journal) {
        List<ConsumerRecord> got = new ArrayList<>();
        try (JournalReader reader = journal.openReader()) {
            // backwards, so that no read is helped by where the previous one left the tailer
            for (long offset = journal.endOffset() - 1; offset >= 0; offset--) {
                got.clear();
                reader.seek(offset);
                assertThat(reader.read(1, 1 << 20, got::add)).isEqualTo(1);
                assertThat(got.get(0).offset()).isEqualTo(offset);
                assertThat(new String(got.get(0).value(), StandardCharsets.UTF_8)).isEqualTo("v" + offset);
            }
        }
    }

    /**
     * Large batches (as the journal writer coalesces a ring turn): a read by offset jumps to a record position learnt by
     * an earlier read of the same batch. Random order, so positions are learnt out of order; more batches than the
     * reader remembers, so they are evicted and learnt again; and after a restart, when the batches are checked
     * against their CRC32C on their first read.
     */
    @Test
    void readsByOffsetInsideLargeBatchesLandOnTheirOwnRecordInAnyOrder() {
        int batches = 40;
        int perBatch = 300;
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            for (int b = 0; b < batches; b++) {
                journal.beginBatch();
                for (int i = 0; i < perBatch; i++) {
                    journal.add(slot(journal.endOffset() + i));
                }
                journal.commitBatch();
            }
            assertRandomReadsReadTheirOwnRecord(journal, new SplittableRandom(11));
        }
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            assertThat(journal.endOffset()).isEqualTo((long) batches * perBatch);
            assertRandomReadsReadTheirOwnRecord(journal, new SplittableRandom(12));
        }
    }

    /**
     * A producer's batch is stored as it came, without the record starts the journal writer keeps beside its own
     * batches: a read by offset walks it, from a start learnt by an earlier read. The two kinds side by side.
     */
    @Test
    void readsByOffsetInsideProducersBatchesStoredWithoutRecordStartsLandOnTheirOwnRecord() {
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            io.sluice.records.RecordBatchWriter writer = new io.sluice.records.RecordBatchWriter();
            for (int b = 0; b < 40; b++) {
                if (b % 2 == 0) {
                    java.nio.ByteBuffer batch = java.nio.ByteBuffer.allocate(64 << 10);
                    writer.begin(batch, 0);
                    long base = journal.endOffset();
                    for (int i = 0; i < 300; i++) {
                        byte[] v = ("v" + (base + i)).getBytes(StandardCharsets.UTF_8);
                        writer.append(1L, null, -1, v, v.length, List.of());
                    }
                    int length = writer.finish(0);
                    assertThat(journal.appendBatch(batch, length, 300)).isEqualTo(base);
                } else {
                    journal.beginBatch();
                    for (int i = 0; i < 300; i++) {
                        journal.add(slot(journal.endOffset() + i));
                    }
                    journal.commitBatch();
                }
            }
            assertRandomReadsReadTheirOwnRecord(journal, new SplittableRandom(13));
        }
    }

    /**
     * The record starts are not covered by the batch's CRC32C: a start damaged on disk that points inside the batch
     * is reported as a damaged batch when a read lands on it, never read as another record.
     */
    @Test
    void aDamagedRecordStartIsReportedAsADamagedBatchNotReadAsAnotherRecord() throws Exception {
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            journal.beginBatch();
            for (int i = 0; i < 64; i++) {
                journal.add(slot(i));
            }
            journal.commitBatch();
        }
        // the starts follow the batch: 64 entries, then stride 1, count 64 and the magic "SLRS"
        Path file;
        try (var files = java.nio.file.Files.list(dir)) {
            file = files.filter(f -> f.toString().endsWith(".cq4")).findFirst().orElseThrow();
        }
        // the file's head only: it is mapped, and grown sparse, in chunks of journal.map.bytes (1 GiB by default)
        java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate(4 << 20);
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.READ)) {
            while (bytes.hasRemaining() && ch.read(bytes) > 0) {
                // a 64-event document is far inside the first 4 MiB
            }
        }
        int magic = indexOf(bytes.array(), "SLRS".getBytes(StandardCharsets.US_ASCII));
        assertThat(magic).as("the record starts' magic in the cycle file").isPositive();
        assertThat(bytes.getInt(magic - 8)).as("stride").isEqualTo(1);
        assertThat(bytes.getInt(magic - 4)).as("entries").isEqualTo(64);
        int entries = magic - 8 - 4 * 64;
        assertThat(bytes.getInt(entries)).as("record 0 starts after the 61-byte header").isEqualTo(61);
        // record 40's start moved 3 bytes into record 39: inside the batch, but not where a record starts
        byte[] damaged = java.nio.ByteBuffer.allocate(4).putInt(bytes.getInt(entries + 4 * 39) + 3).array();
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.wrap(damaged), entries + 4 * 40);
        }
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0);
             JournalReader reader = journal.openReader()) {
            reader.seek(40);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> reader.read(1, 1 << 20, r -> { }))
                    .isInstanceOf(io.sluice.core.SluiceException.CorruptRecordException.class);
            List<ConsumerRecord> got = new ArrayList<>();
            reader.seek(39);
            assertThat(reader.read(1, 1 << 20, got::add)).as("the batch itself is sound").isEqualTo(1);
            assertThat(new String(got.get(0).value(), StandardCharsets.UTF_8)).isEqualTo("v39");
        }
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i <= haystack.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static void assertRandomReadsReadTheirOwnRecord(PartitionJournal journal, SplittableRandom random) {
        long end = journal.endOffset();
        List<ConsumerRecord> got = new ArrayList<>();
        try (JournalReader reader = journal.openReader()) {
            for (int n = 0; n < 3 * end; n++) {
                long offset = random.nextLong(end);
                got.clear();
                reader.seek(offset);
                int many = 1 + random.nextInt(3);
                assertThat(reader.read(many, 1 << 20, got::add)).isEqualTo((int) Math.min(many, end - offset));
                for (int i = 0; i < got.size(); i++) {
                    assertThat(got.get(i).offset()).isEqualTo(offset + i);
                    assertThat(new String(got.get(i).value(), StandardCharsets.UTF_8)).isEqualTo("v" + (offset + i));
                }
            }
        }
    }

    @Test
    void everyOffsetIsReadFromItsOwnBatchBeforeAndAfterARestart() {
        SplittableRandom random = new SplittableRandom(7);
        long end;
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            appendBatches(journal, BATCHES, random);
            end = journal.endOffset();
            assertEveryOffsetReadsItsOwnRecord(journal);
        }
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            assertThat(journal.endOffset()).isEqualTo(end);
            appendBatches(journal, 500, random);
            assertEveryOffsetReadsItsOwnRecord(journal);
        }
    }

    /**
     * journal.map.bytes is how much of a file is mapped at once, not a property of the file: a journal written mapped
     * in 1 GiB chunks (the default) and read mapped in 16 MiB ones (the least allowed), ~47 MiB of 1 KiB events, reads
     * every offset to its own record across the chunks' boundaries, in random order, and appends on after them.
     */
    @Test
    void readsByOffsetCrossTheBoundariesOfTheMappedChunksWhateverTheMappingSize() {
        byte[] pad = new byte[1000];
        java.util.Arrays.fill(pad, (byte) 'x');
        String padding = new String(pad, StandardCharsets.US_ASCII);
        int events = 48_000;
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0,
                io.sluice.core.BrokerConfig.DEFAULT_JOURNAL_MAP_BYTES)) {
            for (int b = 0; b < events / 16; b++) {
                journal.beginBatch();
                for (int i = 0; i < 16; i++) {
                    RingSlot s = new RingSlot();
                    long offset = journal.endOffset() + i;
                    s.fill("t", 0, null, ("v" + offset + padding).getBytes(StandardCharsets.US_ASCII), List.of(), 1L, Acks.JOURNAL, null);
                    journal.add(s);
                }
                journal.commitBatch();
            }
            assertThat(journal.appendedBytes()).isGreaterThan(40L << 20);
        }
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0, 16L << 20)) {
            assertThat(journal.endOffset()).isEqualTo(events);
            SplittableRandom random = new SplittableRandom(11);
            List<ConsumerRecord> got = new ArrayList<>();
            try (JournalReader reader = journal.openReader()) {
                for (int n = 0; n < events; n++) {
                    long offset = random.nextLong(events);
                    got.clear();
                    reader.seek(offset);
                    assertThat(reader.read(1, 1 << 20, got::add)).isEqualTo(1);
                    assertThat(got.get(0).offset()).isEqualTo(offset);
                    assertThat(new String(got.get(0).value(), StandardCharsets.US_ASCII)).isEqualTo("v" + offset + padding);
                }
            }
            journal.beginBatch();
            journal.add(slot(events));
            journal.commitBatch();
            assertThat(journal.endOffset()).isEqualTo(events + 1);
            try (JournalReader reader = journal.openReader()) {
                got.clear();
                reader.seek(events);
                assertThat(reader.read(1, 1 << 20, got::add)).isEqualTo(1);
                assertThat(new String(got.get(0).value(), StandardCharsets.UTF_8)).isEqualTo("v" + events);
            }
        }
    }
}
