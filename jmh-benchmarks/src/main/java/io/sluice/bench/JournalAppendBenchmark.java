package io.sluice.bench;

import io.sluice.bench.baseline.RawJournal;
import io.sluice.bench.internal.TempDir;
import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SendCallback;
import io.sluice.core.TopicConfig;
import io.sluice.core.WaitStrategyType;
import net.openhft.chronicle.queue.ExcerptAppender;
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
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Durable (journaled) publish of 100 B and 1 KiB events, one producer thread, against raw Chronicle Queue appends of
 * the same bytes in the same run. One operation is one event: for Sluice an accepted {@code trySend} with
 * {@link Acks#JOURNAL} (the ring back-pressures the producer, so the steady state is the journal writer's rate),
 * either one ring slot per event or, {@code sluice-batched}, batched per partition by the producer
 * ({@code lingerMicros} 1,000, {@code batchSizeBytes} 64 KiB: one slot and one journal document per batch);
 * for the baseline one {@code writingDocument} append from the benchmark thread per event ({@code raw-chronicle}) or,
 * beside the batched producer, per 64 KiB of length-prefixed events gathered by the benchmark thread
 * ({@code raw-chronicle-batched}: one document per batch, as Sluice's batched producer writes). Goals: ≥ 1.0× raw Chronicle (issue 22), and
 * 1 KiB ≥ 3 × 138,764 msg/s (the 001 reference's storage write).
 * <pre>java -jar jmh-benchmarks/target/benchmarks.jar JournalAppendBenchmark -rf json</pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", JvmFlags.EXPORT_REF, JvmFlags.EXPORT_NIO, JvmFlags.EXPORT_MISC,
        JvmFlags.EXPORT_JAVAC, JvmFlags.OPEN_JAVAC, JvmFlags.OPEN_LANG, JvmFlags.OPEN_REFLECT, JvmFlags.OPEN_IO,
        JvmFlags.OPEN_UTIL, JvmFlags.NO_ANALYTICS, JvmFlags.NO_ANNOUNCER, JvmFlags.QUIET_LOG})
@State(Scope.Benchmark)
public class JournalAppendBenchmark {

    @Param({"100", "1024"})
    public int size;

    /**
     * sluice: one ring slot per event; sluice-batched: the producer batches per partition (lingerMicros 1000, 64 KiB);
     * raw-chronicle: one document per event; raw-chronicle-batched: one document per 64 KiB of length-prefixed events.
     */
    @Param({"sluice", "sluice-batched", "raw-chronicle", "raw-chronicle-batched"})
    public String target;

    /** The broker's wait strategy (the harness passes its own {@code --wait-strategy}). */
    @Param({"SLEEPING"})
    public WaitStrategyType waitStrategy;

    static final int BATCH_BYTES = 64 * 1024;
    private byte[] batch;
    private int batchLength;

    private TempDir dir;
    private Broker broker;
    private Producer producer;
    private ProducerRecord record;
    private RawJournal raw;
    private ExcerptAppender appender;
    private byte[] value;
    private final AtomicLong failures = new AtomicLong();
    private SendCallback callback;

    @Setup(Level.Trial)
    public void open() throws Exception {
        value = new byte[size];
        Arrays.fill(value, (byte) 'x');
        dir = new TempDir(Path.of(System.getProperty("java.io.tmpdir")), "sluice-jmh-journal");
        if (target.startsWith("raw-chronicle")) {
            raw = new RawJournal(dir.resolve("raw"), 1);
            appender = raw.appender(0);
            batch = target.equals("raw-chronicle-batched") ? new byte[BATCH_BYTES] : null;
            return;
        }
        broker = Broker.open(BrokerConfig.builder(dir.resolve("broker")).waitStrategy(waitStrategy).build());
        broker.createTopic(TopicConfig.of("journal", 1));
        ProducerConfig.Builder config = ProducerConfig.builder().acks(Acks.JOURNAL);
        if (target.equals("sluice-batched")) {
            config.lingerMicros(1_000);
        }
        producer = broker.newProducer(config.build());
        record = new ProducerRecord("journal", 0, null, value, List.of(), ProducerRecord.NO_TIMESTAMP);
        callback = (partition, offset, error) -> {
            if (error != null) {
                failures.incrementAndGet();
            }
        };
    }

    @TearDown(Level.Trial)
    public void close() {
        if (raw != null) {
            raw.close();
        }
        if (producer != null) {
            producer.close();
            broker.close();
        }
        dir.close();
        if (failures.get() > 0) {
            throw new IllegalStateException(failures.get() + " journaled sends failed");
        }
    }

    @Benchmark
    public long append() {
        if (batch != null) {
            return appendBatched();
        }
        if (raw != null) {
            return RawJournal.append(appender, value, value.length);
        }
        long r;
        while ((r = producer.trySend(record, callback)) == Producer.BACK_PRESSURED) {
            Thread.onSpinWait();
        }
        return r;
    }

    /** Gathers the event, length-prefixed, into the batch; appends the batch as one document when the event does not fit. */
    private long appendBatched() {
        if (batchLength + 4 + value.length > batch.length) {
            RawJournal.append(appender, batch, batchLength);
            batchLength = 0;
        }
        int n = value.length;
        batch[batchLength] = (byte) (n >>> 24);
        batch[batchLength + 1] = (byte) (n >>> 16);
        batch[batchLength + 2] = (byte) (n >>> 8);
        batch[batchLength + 3] = (byte) n;
        System.arraycopy(value, 0, batch, batchLength + 4, n);
        batchLength += 4 + n;
        return batchLength;
    }
}
