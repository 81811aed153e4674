package io.sluice.bench;

import io.sluice.bench.baseline.LoopbackEcho;
import io.sluice.bench.internal.TempDir;
import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.net.client.ClientConfig;
import io.sluice.net.client.RemoteProducer;
import io.sluice.net.client.RemoteProducerConfig;
import io.sluice.net.client.SyncProducer;
import io.sluice.net.server.BrokerServer;
import io.sluice.net.server.BrokerServerConfig;
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

/**
 * One client, synchronous produce round trip of a 100 B record through Sluice's Netty broker and a Java client
 * ({@code send(record).get()}, acks=JOURNAL; {@code RemoteProducer} with linger 0, or {@code SyncProducer}), beside a
 * raw plain-socket echo of the same 100 B on the same
 * loopback in the same run. Sample-time mode: JMH reports P50/P90/P99/P99.9 per target. Goal: Sluice's P50 ≤ 1.5×
 * the echo's (001 reference: 54.55 µs P50).
 * <pre>java -jar jmh-benchmarks/target/benchmarks.jar NetworkProduceBenchmark -rf json</pre>
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", JvmFlags.EXPORT_REF, JvmFlags.EXPORT_NIO, JvmFlags.EXPORT_MISC,
        JvmFlags.EXPORT_JAVAC, JvmFlags.OPEN_JAVAC, JvmFlags.OPEN_LANG, JvmFlags.OPEN_REFLECT, JvmFlags.OPEN_IO,
        JvmFlags.OPEN_UTIL, JvmFlags.NO_ANALYTICS, JvmFlags.NO_ANNOUNCER, JvmFlags.QUIET_LOG})
@State(Scope.Benchmark)
public class NetworkProduceBenchmark {

    /** {@code sluice}: {@code RemoteProducer} (an event loop between the caller and its socket); {@code sluice-sync}: {@code SyncProducer} (the caller's own socket I/O). */
    @Param({"sluice", "sluice-sync", "raw-echo"})
    public String target;

    /** The broker's {@code wait.strategy} ({@link io.sluice.core.WaitStrategyType}, lower case); try others with {@code -p waitStrategy=yielding}. */
    @Param({"sleeping"})
    public String waitStrategy;

    private TempDir dir;
    private Broker broker;
    private BrokerServer server;
    private Producer producer;
    private ProducerRecord record;
    private LoopbackEcho echo;
    private LoopbackEcho.Client echoClient;
    private byte[] value;

    @Setup(Level.Trial)
    public void open() throws Exception {
        value = new byte[100];
        Arrays.fill(value, (byte) 'x');
        if (target.equals("raw-echo")) {
            echo = new LoopbackEcho();
            echoClient = echo.connect();
            return;
        }
        dir = new TempDir(Path.of(System.getProperty("java.io.tmpdir")), "sluice-jmh-net");
        broker = Broker.open(BrokerConfig.builder(dir.resolve("broker"))
                .waitStrategy(io.sluice.core.WaitStrategyType.valueOf(waitStrategy.toUpperCase(java.util.Locale.ROOT))).build());
        broker.createTopic(TopicConfig.of("net", 1));
        server = BrokerServer.start(broker, BrokerServerConfig.builder().bindAddress("127.0.0.1").port(0).build());
        ClientConfig client = ClientConfig.of("127.0.0.1:" + server.port());
        ProducerConfig acks = ProducerConfig.builder().acks(Acks.JOURNAL).build();
        producer = target.equals("sluice-sync") ? new SyncProducer(client, acks)
                : new RemoteProducer(RemoteProducerConfig.builder(client).producer(acks).lingerMicros(0).build());
        record = new ProducerRecord("net", 0, null, value, List.of(), ProducerRecord.NO_TIMESTAMP);
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        if (echo != null) {
            echoClient.close();
            echo.close();
            return;
        }
        producer.close();
        server.close();
        broker.close();
        dir.close();
    }

    @Benchmark
    public Object roundTrip() throws Exception {
        if (echoClient != null) {
            echoClient.roundTrip(value);
            return echoClient;
        }
        return producer.send(record).get(10, TimeUnit.SECONDS);
    }
}
