package io.sluice.bench;

import io.sluice.bench.baseline.RawRingBus;
import io.sluice.bench.internal.TempDir;
import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SendCallback;
import io.sluice.core.Subscription;
import io.sluice.core.TopicConfig;
import io.sluice.core.WaitStrategyType;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Publish → in-process subscriber throughput with 1 and 4 producer threads. One operation is one event accepted
 * on the ring; a full ring makes the producer spin, so the steady-state rate is the rate at which the subscriber
 * drains events. Targets, measured in the same run:
 * <ul>
 *   <li>{@code sluice-memory}: a memory-only topic ({@code journaled(false)}), {@code Producer.trySend(record,
 *       callback)} with a reused record and {@link Acks#MEMORY}, one live subscriber;</li>
 *   <li>{@code sluice-journal}: the same on a journaled topic (the subscriber runs after the Chronicle append);</li>
 *   <li>{@code raw-disruptor}: a plain multi-producer Disruptor {@code RingBuffer} of the same size with one
 *       {@code BatchEventProcessor}.</li>
 * </ul>
 * Run with {@code -prof gc}: the publish path of Sluice should allocate ~0 B/op.
 * <pre>java -jar jmh-benchmarks/target/benchmarks.jar BusPublishBenchmark -prof gc -rf json</pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", JvmFlags.EXPORT_REF, JvmFlags.EXPORT_NIO, JvmFlags.EXPORT_MISC,
        JvmFlags.EXPORT_JAVAC, JvmFlags.OPEN_JAVAC, JvmFlags.OPEN_LANG, JvmFlags.OPEN_REFLECT, JvmFlags.OPEN_IO,
        JvmFlags.OPEN_UTIL, JvmFlags.NO_ANALYTICS, JvmFlags.NO_ANNOUNCER, JvmFlags.QUIET_LOG})
@State(Scope.Benchmark)
public class BusPublishBenchmark {
    static final int RING_SIZE = 16_384;
    static final int VALUE_SIZE = 64;

    @Param({"sluice-memory", "sluice-journal", "raw-disruptor"})
    public String target;

    /** The wait strategy of Sluice's broker and the raw ring (the harness passes its own {@code --wait-strategy}). */
    @Param({"SLEEPING"})
    public WaitStrategyType waitStrategy;

    private TempDir dir;
    private Broker broker;
    private Producer producer;
    private Subscription subscription;
    private ProducerRecord record;
    private RawRingBus raw;
    private byte[] value;
    private long consumed;
    private static final SendCallback IGNORE = (partition, offset, error) -> {
    };

    @Setup(Level.Trial)
    public void open() throws Exception {
        value = new byte[VALUE_SIZE];
        if (target.equals("raw-disruptor")) {
            raw = new RawRingBus("jmh-raw", 1, RING_SIZE, waitStrategy, true, p -> (bytes, length, nanos, endOfBatch) -> consumed++);
            return;
        }
        dir = new TempDir(Path.of(System.getProperty("java.io.tmpdir")), "sluice-jmh-bus");
        broker = Broker.open(BrokerConfig.builder(dir.resolve("broker")).ringSize(RING_SIZE).waitStrategy(waitStrategy).build());
        boolean journaled = target.equals("sluice-journal");
        broker.createTopic(TopicConfig.builder("bus").partitions(1).journaled(journaled).build());
        subscription = broker.subscribe("bus", "jmh-counter", (event, endOfBatch) -> consumed++);
        producer = broker.newProducer(ProducerConfig.builder().acks(Acks.MEMORY).build());
        record = new ProducerRecord("bus", 0, null, value, java.util.List.of(), ProducerRecord.NO_TIMESTAMP);
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        if (raw != null) {
            raw.close();
        }
        if (producer != null) {
            producer.close();
            subscription.close();
            broker.close();
            dir.close();
        }
    }

    private void publishOne() {
        if (raw != null) {
            raw.publish(0, value);
            return;
        }
        long r;
        while ((r = producer.trySend(record, IGNORE)) == Producer.BACK_PRESSURED) {
            Thread.onSpinWait();
        }
        if (r != Producer.ACCEPTED) {
            throw new IllegalStateException("trySend returned " + r);
        }
    }

    @Benchmark
    @Threads(1)
    public void oneProducer() {
        publishOne();
    }

    @Benchmark
    @Threads(4)
    public void fourProducers() {
        publishOne();
    }
}
