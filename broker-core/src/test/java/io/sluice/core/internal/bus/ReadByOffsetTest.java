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
}
