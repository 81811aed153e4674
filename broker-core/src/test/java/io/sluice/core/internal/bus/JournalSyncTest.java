package io.sluice.core.internal.bus;

import io.sluice.core.Acks;
import io.sluice.core.EpochClock;
import io.sluice.core.Producer;
import io.sluice.core.RollCycleType;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.core.WaitStrategyType;
import io.sluice.core.internal.journal.PartitionJournal;
import io.sluice.testkit.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link Acks#SYNC}: acknowledged only after a successful sync of everything acknowledged — every cycle file written
 * since the last sync, also when the batch's last append failed. Faults are injected into the real journal: an
 * append that throws half-way, a cycle file that cannot be forced.
 */
class JournalSyncTest {
    @TempDir
    Path dir;
    final TopicPartition tp = new TopicPartition("t", 0);
    final AtomicLong now = new AtomicLong(1_699_999_800_000L); // on a 5-minute boundary
    final EpochClock clock = now::get;

    private static RingSlot slot(String value, boolean broken) {
        RingSlot s = new RingSlot();
        // null headers make the codec throw half-way through the record: a failed append
        s.fill("t", 0, null, value.getBytes(StandardCharsets.UTF_8), broken ? null : List.of(), 1L, Acks.SYNC, null);
        return s;
    }

    @Test
    void syncAfterAFailedAppendStillForcesTheRecordsBeforeIt() {
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            journal.append(slot("a", false));
            journal.append(slot("b", false));
            assertThatThrownBy(() -> journal.append(slot("c", true))).isInstanceOf(SluiceException.JournalException.class);
            // the failed append discarded the appender; the sync must not depend on it
            journal.sync();
            assertThat(journal.syncedEndOffset()).isEqualTo(2);
            assertThat(journal.endOffset()).isEqualTo(2);
        }
    }

    @Test
    void syncCoversEveryCycleFileWrittenSinceTheLastSync() throws Exception {
        try (PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            journal.append(slot("first cycle", false));
            now.addAndGet(TimeUnit.MINUTES.toMillis(5));
            journal.append(slot("second cycle", false));
            journal.sync();
            assertThat(journal.syncedEndOffset()).isEqualTo(2);

            journal.append(slot("second cycle again", false));
            now.addAndGet(TimeUnit.MINUTES.toMillis(5));
            journal.append(slot("third cycle", false));
            // fault: the second cycle's file can no longer be forced. A sync of only the current chunk (the third
            // cycle) would succeed and acknowledge offset 2 without it being on disk; this one must fail
            List<Path> files = cycleFiles();
            assertThat(files).hasSize(3);
            Files.delete(files.get(1));
            assertThatThrownBy(journal::sync).isInstanceOf(SluiceException.JournalException.class)
                    .hasMessageContaining("sync");
            assertThat(journal.syncedEndOffset()).isEqualTo(2);
        }
    }

    @Test
    void syncAckWaitsForMsync() {
        try (StageAgents journalThreads = new StageAgents("sluice-journal", 1, WaitStrategyType.BLOCKING);
             StageAgents subscriberThreads = new StageAgents("sluice-subscriber", 1, WaitStrategyType.BLOCKING);
             PartitionJournal journal = new PartitionJournal(tp, dir, RollCycleType.FIVE_MINUTELY, clock, 0);
             PartitionRing ring = new PartitionRing(tp, 1024, journal, journalThreads, subscriberThreads)) {
            record Ack(long offset, long syncedAtAck, Throwable error) {
            }
            ConcurrentLinkedQueue<Ack> acks = new ConcurrentLinkedQueue<>();
            int sent = 0;
            for (int i = 0; i < 500; i++) {
                boolean broken = i % 50 == 49; // some batches end with a failed append
                if (i == 250) {
                    now.addAndGet(TimeUnit.MINUTES.toMillis(5)); // and one spans a roll
                }
                long r = ring.tryPublish(null, ("e" + i).getBytes(StandardCharsets.UTF_8), broken ? null : List.of(), 1L,
                        Acks.SYNC, (partition, offset, error) -> acks.add(new Ack(offset, journal.syncedEndOffset(), error)));
                assertThat(r).isEqualTo(Producer.ACCEPTED);
                sent++;
            }
            int expected = sent;
            Await.until("every SYNC send completed", Duration.ofSeconds(30), () -> acks.size() == expected);
            List<Ack> ok = new ArrayList<>();
            for (Ack a : acks) {
                if (a.error() == null) {
                    ok.add(a);
                }
            }
            assertThat(ok).hasSize(490);
            assertThat(ok).allSatisfy(a -> assertThat(a.offset()).as("acked offset vs synced end at ack")
                    .isLessThan(a.syncedAtAck()));
        }
    }

    private List<Path> cycleFiles() throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(f -> f.getFileName().toString().endsWith(".cq4")).sorted().toList();
        }
    }
}
