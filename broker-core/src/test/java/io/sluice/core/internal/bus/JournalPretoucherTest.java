package io.sluice.core.internal.bus;

import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.EpochClock;
import io.sluice.core.RollCycleType;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.journal.JournalPretoucher;
import io.sluice.core.internal.journal.PartitionJournal;
import io.sluice.testkit.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link JournalPretoucher}: it reads the pages after each journal's last document into the page cache, up to its
 * distance and no further, in whole chunks, follows the writer into the next cycle file, lets go of files the writer
 * left or the journal closed, and never changes what the journal holds. Checked on real journals and, for the open
 * files, on {@code /proc/self/fd}.
 */
class JournalPretoucherTest {
    private static final long AHEAD = 256 << 10;
    private static final Duration DEADLINE = Duration.ofSeconds(10);

    @TempDir
    Path dir;
    final AtomicLong now = new AtomicLong(1_699_999_800_000L); // on a 5-minute boundary
    final EpochClock clock = now::get;

    private static RingSlot slot(String value) {
        RingSlot s = new RingSlot();
        s.fill("t", 0, null, value.getBytes(StandardCharsets.UTF_8), List.of(), 1L, Acks.JOURNAL, null);
        return s;
    }

    @Test
    void readsAheadOfTheLastDocumentUpToItsDistanceAndNoFurther() {
        try (JournalPretoucher pretoucher = new JournalPretoucher(AHEAD, "test-pretouch");
             PartitionJournal journal = new PartitionJournal(new TopicPartition("t", 0), dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            JournalPretoucher.Target target = pretoucher.register("t-0");
            journal.pretouchWith(target);
            long before = pretoucher.passes();
            Await.until("a few passes", DEADLINE, () -> pretoucher.passes() > before + 2);
            assertThat(pretoucher.touchedBytes()).as("nothing is read before the first append").isZero();

            journal.append(slot("x".repeat(1000)));
            long end = target.end();
            assertThat(end).as("the end of the document, a position in the cycle file").isGreaterThan(1000);
            Await.until(() -> "touched to " + target.touchedTo() + ", end " + end, DEADLINE,
                    () -> target.touchedTo() == end + AHEAD);
            assertThat(pretoucher.touchedBytes()).isEqualTo(AHEAD);

            long passes = pretoucher.passes();
            Await.until("three more passes", DEADLINE, () -> pretoucher.passes() > passes + 3);
            assertThat(pretoucher.touchedBytes()).as("a journal that stopped writing costs no more reads").isEqualTo(AHEAD);

            journal.append(slot("y".repeat(5000)));
            long small = pretoucher.passes();
            Await.until("three more passes", DEADLINE, () -> pretoucher.passes() > small + 3);
            assertThat(pretoucher.touchedBytes()).as("less than a chunk of the lead used: no read yet").isEqualTo(AHEAD);

            journal.append(slot("z".repeat(JournalPretoucher.CHUNK)));
            long next = target.end();
            assertThat(next).isGreaterThan(end + 5000 + JournalPretoucher.CHUNK);
            Await.until(() -> "touched to " + target.touchedTo() + ", end " + next, DEADLINE,
                    () -> target.touchedTo() == next + AHEAD);
            assertThat(pretoucher.touchedBytes()).as("only the pages newly within reach").isEqualTo(AHEAD + (next - end));

            assertThat(journal.endOffset()).isEqualTo(3);
            assertThat(values(journal)).containsExactly("x".repeat(1000), "y".repeat(5000), "z".repeat(JournalPretoucher.CHUNK));
        }
    }

    @Test
    void followsTheWriterIntoTheNextCycleFileAndLetsGoOfTheOneItLeft() throws IOException {
        try (JournalPretoucher pretoucher = new JournalPretoucher(AHEAD, "test-pretouch");
             PartitionJournal journal = new PartitionJournal(new TopicPartition("t", 0), dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
            JournalPretoucher.Target target = pretoucher.register("t-0");
            journal.pretouchWith(target);
            journal.append(slot("first cycle"));
            Path first = onlyCycleFile();
            Await.until("the first cycle file open in the pretoucher", DEADLINE, () -> first.equals(target.openFile()));

            now.addAndGet(TimeUnit.MINUTES.toMillis(5));
            journal.append(slot("second cycle"));
            Path second = cycleFiles().stream().filter(p -> !p.equals(first)).findFirst().orElseThrow();
            long end = target.end();
            Await.until(() -> "touched to " + target.touchedTo() + " in " + target.openFile(), DEADLINE,
                    () -> second.equals(target.openFile()) && target.touchedTo() == end + AHEAD);
            // the pretoucher holds one channel per journal: the first file's was closed when it opened the second
            assertThat(values(journal)).containsExactly("first cycle", "second cycle");
        }
    }

    @Test
    void closingTheJournalClosesItsFileInThePretoucher() throws IOException {
        try (JournalPretoucher pretoucher = new JournalPretoucher(AHEAD, "test-pretouch")) {
            Path file;
            try (PartitionJournal journal = new PartitionJournal(new TopicPartition("t", 0), dir, RollCycleType.FIVE_MINUTELY, clock, 0)) {
                JournalPretoucher.Target target = pretoucher.register("t-0");
                journal.pretouchWith(target);
                journal.append(slot("a"));
                file = onlyCycleFile();
                Await.until("the cycle file open in the pretoucher", DEADLINE, () -> file.equals(target.openFile()));
                assertThat(openHere(file)).isTrue();
            }
            // the journal closed its own descriptors; the pretoucher's must go too, or the file's space outlives it
            Await.until("no descriptor of this process on " + file, DEADLINE, () -> !openHere(file));
        }
    }

    @Test
    void aBrokerPretouchesByDefaultAndZeroTurnsItOff() throws Exception {
        assertThat(BrokerConfig.builder(dir).build().journalPretouchBytes()).isEqualTo(4L << 20);
        assertThatThrownBy(() -> BrokerConfig.builder(dir).journalPretouchBytes(4096).build())
                .isInstanceOf(SluiceException.InvalidConfigException.class)
                .hasMessageContaining("journalPretouchBytes").hasMessageContaining("0 or between 65536 and 1073741824");
        try (Broker broker = Broker.open(BrokerConfig.builder(dir.resolve("on")).build())) {
            assertThat(threadsNamed("sluice-pretouch")).isEqualTo(1);
        }
        Await.until("the pretouch thread ended with its broker", DEADLINE, () -> threadsNamed("sluice-pretouch") == 0);
        try (Broker broker = Broker.open(BrokerConfig.builder(dir.resolve("off")).journalPretouchBytes(0).build())) {
            assertThat(threadsNamed("sluice-pretouch")).isZero();
        }
    }

    private static long threadsNamed(String name) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name) && t.isAlive()).count();
    }

    private static List<String> values(PartitionJournal journal) {
        List<ConsumerRecord> out = new java.util.ArrayList<>();
        var reader = journal.openReader();
        reader.read(100, 1 << 20, out::add);
        reader.close();
        return out.stream().map(r -> new String(r.value(), StandardCharsets.UTF_8)).toList();
    }

    private Path onlyCycleFile() throws IOException {
        List<Path> files = cycleFiles();
        assertThat(files).hasSize(1);
        return files.get(0);
    }

    private List<Path> cycleFiles() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.toString().endsWith(".cq4")).sorted().toList();
        }
    }

    /** True if a descriptor of this process points at {@code file} (Linux's /proc/self/fd). */
    private static boolean openHere(Path file) {
        Path target = file.toAbsolutePath().normalize();
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.anyMatch(fd -> {
                try {
                    return Files.readSymbolicLink(fd).equals(target);
                } catch (IOException e) {
                    return false; // closed meanwhile
                }
            });
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
