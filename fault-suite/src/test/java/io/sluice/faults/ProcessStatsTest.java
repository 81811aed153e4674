package io.sluice.faults;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** What the soak reads of a process: the NMT categories it splits, and the journal's share of resident memory. */
class ProcessStatsTest {
    @TempDir
    Path dir;

    /** A JDK 17 {@code jcmd VM.native_memory summary}, cut to the categories the soak reads and a few it sums as other. */
    private static final String NMT = """
            Native Memory Tracking:

            Total: reserved=7842507KB, committed=484723KB
                   malloc: 10115KB #61009
                   mmap:   reserved=7832392KB, committed=474608KB

            -                 Java Heap (reserved=6172672KB, committed=397312KB)
                                        (mmap: reserved=6172672KB, committed=397312KB)

            -                     Class (reserved=1048784KB, committed=1360KB)
                                        (classes #2500)
                                        (    reserved=65536KB, committed=7936KB)

            -                    Thread (reserved=19506KB, committed=890KB)
                                        (stack: reserved=19456KB, committed=840KB)

            -                      Code (reserved=247865KB, committed=7725KB)

            -                        GC (reserved=267165KB, committed=52845KB)

            -                     Other (reserved=10KB, committed=10KB)

            -                    Symbol (reserved=2805KB, committed=2805KB)

            -    Native Memory Tracking (reserved=967KB, committed=967KB)

            -                 Metaspace (reserved=65565KB, committed=7965KB)
            """;

    @Test
    void nmtCommittedTotalsAreReadPerCategoryAndTheRestIsOtherNative() {
        ProcessStats.Nmt n = ProcessStats.Nmt.parse(NMT);
        assertThat(n.total()).isEqualTo(484_723L * 1024);
        assertThat(n.heap()).isEqualTo(397_312L * 1024);
        assertThat(n.metaspace()).isEqualTo((1_360L + 7_965L) * 1024); // Class + Metaspace, not the nested "(reserved=..." lines
        assertThat(n.threads()).isEqualTo(890L * 1024);
        assertThat(n.code()).isEqualTo(7_725L * 1024);
        assertThat(n.gc()).isEqualTo(52_845L * 1024);
        assertThat(n.otherNative()).isEqualTo((484_723L - 397_312 - 1_360 - 7_965 - 890 - 7_725 - 52_845) * 1024);
        assertThat(ProcessStats.Nmt.categories(NMT)).containsEntry("Other", 10L * 1024).containsEntry("Native Memory Tracking", 967L * 1024);
        assertThat(ProcessStats.Nmt.parse("jcmd: no NMT")).isEqualTo(ProcessStats.Nmt.UNKNOWN);
    }

    @Test
    void theJournalShareIsTheResidentPagesOfMappedChronicleQueueFilesOnly() throws Exception {
        long pid = ProcessHandle.current().pid();
        int mib = 1 << 20;
        try (FileChannel journal = FileChannel.open(dir.resolve("20261127.cq4"), StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
             FileChannel other = FileChannel.open(dir.resolve("other.dat"), StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long before = ProcessStats.journalMappedBytes(pid);
            MappedByteBuffer j = journal.map(FileChannel.MapMode.READ_WRITE, 0, 4L * mib);
            MappedByteBuffer o = other.map(FileChannel.MapMode.READ_WRITE, 0, 8L * mib);
            for (int i = 0; i < 4 * mib; i += 4096) {
                j.put(i, (byte) 1); // every page of the journal file resident
            }
            for (int i = 0; i < 8 * mib; i += 4096) {
                o.put(i, (byte) 1); // and of a file that is not a journal
            }
            long after = ProcessStats.journalMappedBytes(pid);
            assertThat(after - before).isBetween(2L * mib, 4L * mib);
            assertThat(j.get(0) + o.get(0)).isEqualTo(2); // both mappings still reachable while measured
        }
    }

    @Test
    void thePlotDrawsTheRssSplitAndStillDrawsAnOlderCsvWithoutIt() {
        String header = "minute,broker_rss_mb,ingest_rss_mb,broker_rss_anon_mb,broker_rss_file_mb,broker_journal_mapped_mb";
        String svg = SoakPlot.svg(List.of(header, "1,200,150,170,30,3", "2,210,150,175,35,8"), "t");
        assertThat(svg).contains("broker RSS split").contains("RssAnon").contains("of it journal");
        String old = SoakPlot.svg(List.of("minute,broker_rss_mb,ingest_rss_mb", "1,200,150", "2,210,150"), "old");
        assertThat(old).contains("<polyline").endsWith("</svg>\n");
    }
}
