package io.sluice.core.internal.bus;

import io.sluice.bench.JvmFlags;
import io.sluice.bench.baseline.RawJournal;
import io.sluice.bench.internal.TempDir;
import io.sluice.core.Acks;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.EpochClock;
import io.sluice.core.RollCycleType;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.journal.JournalReader;
import io.sluice.core.internal.journal.PartitionJournal;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * A read of one 1 KiB event at a random offset (stream-processor 7's random read) against a raw Chronicle read of one
 * excerpt by index, in the same run, one thread, on 20,000 events. Sluice's journal is written through
 * {@link PartitionJournal} directly in batches of {@code eventsPerBatch} events (one Chronicle document each, as the
 * journal writer coalesces a ring turn); the read is {@code JournalReader.seek} + {@code read(1, …)}, which finds the
 * batch (offset index, then a search between its entries), views the batch in place in the mapped file (its CRC32C
 * was checked when it was stored), moves to the record's start (kept beside the batch by the journal writer: internal
 * journal {@code RecordStarts}) and decodes it. The raw read is {@code moveToIndex} + one excerpt read. Goal of issue 22: the Sluice read ≤ 2× the raw one.
 * In the package of the classes it uses (a benchmark, not part of the broker).
 * <pre>java -jar jmh-benchmarks/target/benchmarks.jar RandomReadBenchmark</pre>
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", JvmFlags.EXPORT_REF, JvmFlags.EXPORT_NIO, JvmFlags.EXPORT_MISC,
        JvmFlags.EXPORT_JAVAC, JvmFlags.OPEN_JAVAC, JvmFlags.OPEN_LANG, JvmFlags.OPEN_REFLECT, JvmFlags.OPEN_IO,
        JvmFlags.OPEN_UTIL, JvmFlags.NO_ANALYTICS, JvmFlags.NO_ANNOUNCER, JvmFlags.QUIET_LOG})
@State(Scope.Thread)
public class RandomReadBenchmark {
    static final int SIZE = 1024;

    /**
     * Events in each journal: 20,000 (a few documents per Chronicle index entry), or 300,000 (~300 MiB, as
     * stream-processor 7 reads from: a read then lands on pages far apart).
     */
    @Param({"20000"})
    public int events;

    /**
     * 1: one event per document, as the raw journal stores them; 64: what the journal writer coalesces of 1 KiB events
     * at most (its 64 KiB bound; stream-processor 7's write loop); 256 and 1000: a producer's batches of 256 KiB and
     * ~1 MiB, stored whole (a Kafka producer's {@code batch.size} can be that large).
     */
    @Param({"1", "64", "256", "1000"})
    public int eventsPerBatch;

    private TempDir dir;
    private PartitionJournal journal;
    private JournalReader reader;
    private RawJournal raw;
    private ExcerptTailer tailer;
    private long[] indexes;
    private final SplittableRandom random = new SplittableRandom(1);
    private final byte[] buffer = new byte[64 * 1024];
    private ConsumerRecord last;

    @Setup(Level.Trial)
    public void open() throws Exception {
        dir = new TempDir(Path.of(System.getProperty("java.io.tmpdir")), "sluice-jmh-random-read");
        byte[] value = new byte[SIZE];
        indexes = new long[events];
        journal = new PartitionJournal(new TopicPartition("t", 0), dir.resolve("journal"), RollCycleType.DAILY,
                EpochClock.SYSTEM, 0);
        RingSlot slot = new RingSlot();
        for (int written = 0; written < events; ) {
            journal.beginBatch();
            for (int i = 0; i < eventsPerBatch && written < events; i++, written++) {
                slot.fill("t", 0, null, value, List.of(), System.currentTimeMillis(), Acks.JOURNAL, null);
                journal.add(slot);
            }
            journal.commitBatch();
        }
        journal.closeAppender();
        reader = journal.openReader();
        raw = new RawJournal(dir.resolve("raw"), 1);
        ExcerptAppender appender = raw.appender(0);
        for (int i = 0; i < events; i++) {
            indexes[i] = RawJournal.append(appender, value, value.length);
        }
        tailer = raw.tailer(0);
        tailer.singleThreadedCheckDisabled(true); // opened here, read on the benchmark thread
    }

    @TearDown(Level.Trial)
    public void close() {
        reader.close();
        journal.close();
        raw.close();
        dir.close();
    }

    @Benchmark
    public ConsumerRecord sluiceReadByOffset() {
        reader.seek(random.nextInt(events));
        if (reader.read(1, 1 << 20, r -> last = r) != 1) {
            throw new IllegalStateException("no record at " + reader.position());
        }
        return last;
    }

    @Benchmark
    public int rawChronicleReadByIndex() {
        long index = indexes[random.nextInt(events)];
        if (!tailer.moveToIndex(index)) {
            throw new IllegalStateException("raw read missed index " + index);
        }
        return RawJournal.read(tailer, buffer);
    }
}
