package io.sluice.core.internal.bus;

import io.sluice.core.Acks;
import io.sluice.core.EpochClock;
import io.sluice.core.RollCycleType;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.journal.PartitionJournal;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Recovery of the end offset cross-checks the cycle map: a crash right after a roll can leave a newest cycle file that
 * holds no record (only Chronicle's metadata), and offsets must continue from the last record of the cycle before.
 */
class JournalRecoveryTest {
    @TempDir
    Path dir;
    final TopicPartition tp = new TopicPartition("t", 0);
    final AtomicLong now = new AtomicLong(1_699_999_800_000L); // on a 5-minute boundary
    final EpochClock clock = now::get;

    private static RingSlot slot(String value) {
        RingSlot s = new RingSlot();
        s.fill("t", 0, null, value.getBytes(StandardCharsets.UTF_8), List.of(), 1L, Acks.JOURNAL, null);
        return s;
    }

    @Test
    void aNewestCycleFileWithoutRecordsDoesNotResetTheEndOffset() {
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            for (int i = 0; i < 7; i++) {
                journal.append(slot("r" + i));
            }
        }
        // the broker rolled to a new cycle and died before its first record: the file holds only metadata
        now.addAndGet(TimeUnit.MINUTES.toMillis(5));
        try (SingleChronicleQueue q = SingleChronicleQueueBuilder.binary(dir).rollCycle(RollCycles.FIVE_MINUTELY)
                .timeProvider(now::get).build();
             ExcerptAppender appender = q.createAppender()) {
            try (DocumentContext dc = appender.writingDocument(true)) {
                dc.wire().write("roll").text("crashed before the first record");
            }
        }
        now.addAndGet(TimeUnit.MINUTES.toMillis(5));
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            assertThat(journal.endOffset()).isEqualTo(7);
            assertThat(journal.append(slot("next"))).isEqualTo(7);
        }
    }

    /** Child process: args dir, epochMillis. Starts a record in the cycle of epochMillis and halts before finishing it. */
    public static final class HaltMidWrite {
        public static void main(String[] args) {
            long at = Long.parseLong(args[1]);
            SingleChronicleQueue q = SingleChronicleQueueBuilder.binary(Path.of(args[0])).rollCycle(RollCycles.FIVE_MINUTELY)
                    .timeProvider(() -> at).build();
            ExcerptAppender appender = q.createAppender();
            DocumentContext dc = appender.writingDocument();
            dc.wire().bytes().writeLong(7L); // the start of a record; its header stays "being written"
            System.out.println("halting");
            System.out.flush();
            Runtime.getRuntime().halt(9);
        }
    }

    @Test
    void aRecordTornByACrashRightAfterARollDoesNotResetTheEndOffset() throws Exception {
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            for (int i = 0; i < 7; i++) {
                journal.append(slot("r" + i));
            }
        }
        now.addAndGet(TimeUnit.MINUTES.toMillis(5));
        try (io.sluice.testkit.ChildJvm child = io.sluice.testkit.ChildJvm.start(HaltMidWrite.class, dir.toString(),
                Long.toString(now.get()))) {
            assertThat(child.readLine()).isEqualTo("halting");
            assertThat(child.waitFor(30)).isEqualTo(9);
        }
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            assertThat(journal.endOffset()).isEqualTo(7);
            assertThat(journal.append(slot("next"))).isEqualTo(7);
        }
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            assertThat(journal.endOffset()).isEqualTo(8);
            var reader = journal.openReader();
            java.util.List<Long> offsets = new java.util.ArrayList<>();
            reader.read(100, 1 << 20, r -> offsets.add(r.offset()));
            reader.close();
            assertThat(offsets).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L);
        }
    }
}
