package io.sluice.net.reliability;

import io.sluice.core.Acks;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.RecordMetadata;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.net.client.RemoteAdmin;
import io.sluice.net.client.RemoteProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * <b>Promise:</b> the broker survives many clients: {@value #CONNECTIONS} concurrent connections each produce a batch
 * (acks=journal) and are then all dropped at once (TCP reset, mid-conversation); the broker stays up, a fresh client
 * still produces, every acknowledged record is stored, the broker closes every dropped connection, and its memory
 * returns to about its baseline.
 *
 * <p>Memory is measured inside the child broker after two full GCs (heap in use, Netty direct memory in use, live
 * threads), and RSS from {@code /proc/<pid>/status} is logged too. The bounds are generous (they catch a leak of a
 * buffer or handler per connection, not noise): heap within {@value #HEAP_SLACK_MIB} MiB of baseline, direct memory
 * within {@value #DIRECT_SLACK_MIB} MiB, threads within {@value #THREAD_SLACK}. The child's maxConnections is raised
 * to 2,000 (default 10,000); the test needs about 1,000 file descriptors per process ({@code ulimit -n}).
 */
class ManyConnectionsTest {
    private static final Logger LOG = LoggerFactory.getLogger(ManyConnectionsTest.class);
    static final int CONNECTIONS = 1_000;
    private static final int RECORDS_PER_CONNECTION = 10;
    private static final int WARMUP_RECORDS = 2_000;
    static final int HEAP_SLACK_MIB = 48;
    static final int DIRECT_SLACK_MIB = 64;
    static final int THREAD_SLACK = 8;
    private static final String TOPIC = "many";

    @TempDir
    Path dir;

    @Test
    void aThousandConnectionsProduceAndVanishAtOnceAndTheBrokerServesOnWithItsMemoryBackAtBaseline() throws Exception {
        try (BrokerProcess broker = BrokerProcess.start(StatsBroker.class, dir.resolve("broker.log"), "256m",
                dir.resolve("data").toString(), "0", "2000", "256", "600000")) {
            String bootstrap = "127.0.0.1:" + broker.awaitLine(StatsBroker.LISTENING, Duration.ofSeconds(60)).group(1);
            int port = Integer.parseInt(bootstrap.substring(bootstrap.indexOf(':') + 1));
            try (RemoteAdmin admin = new RemoteAdmin(bootstrap)) {
                admin.createTopic(TopicConfig.of(TOPIC, 4));
            }
            // warm up the paths the test uses (class loading, allocator arenas, journal appenders) before the baseline
            long acked = produceWithClient(bootstrap, WARMUP_RECORDS, "warmup");
            acked += produceOverSockets(port, 20, 0);
            StatsBroker.Snapshot baseline = StatsBroker.Snapshot.of(broker);

            // 1,000 connections, all open at the same time, each with a produce batch answered
            List<Socket> sockets = new ArrayList<>(CONNECTIONS);
            long wireAcked;
            try {
                for (int i = 0; i < CONNECTIONS; i++) {
                    Socket s = new Socket();
                    sockets.add(s);
                    s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
                    s.setSoTimeout(30_000);
                }
                for (int i = 0; i < CONNECTIONS; i++) {
                    sockets.get(i).getOutputStream().write(WireClient.produceFrame(i, Acks.JOURNAL, TOPIC, i % 4, batch(i)));
                }
                wireAcked = 0;
                for (int i = 0; i < CONNECTIONS; i++) {
                    WireClient.Response r = WireClient.Response.readProduce(new DataInputStream(sockets.get(i).getInputStream()), RECORDS_PER_CONNECTION);
                    assertThat(r.correlationId()).isEqualTo(i);
                    assertThat(r.errorCode()).as("produce on connection %d", i).isZero();
                    wireAcked += r.offsets().length;
                }
                StatsBroker.Snapshot loaded = StatsBroker.Snapshot.of(broker);
                LOG.info("with {} connections open: {}", CONNECTIONS, loaded);
                assertThat(loaded.active()).isGreaterThanOrEqualTo(CONNECTIONS);
                assertThat(loaded.refused()).isZero();
            } finally {
                // all dropped at once: RST, no orderly close
                for (Socket s : sockets) {
                    s.setSoLinger(true, 0);
                    s.close();
                }
            }
            acked += wireAcked;

            awaitActiveConnections(broker, 0);
            acked += produceWithClient(bootstrap, WARMUP_RECORDS, "after"); // a fresh client still produces
            acked += produceOverSockets(port, 20, 1);
            StatsBroker.Snapshot after = awaitActiveConnections(broker, 0); // the clients above closed: wait for the broker to see it
            long present;
            try (RemoteAdmin admin = new RemoteAdmin(bootstrap)) {
                present = 0;
                for (int p = 0; p < 4; p++) {
                    present += admin.endOffset(new TopicPartition(TOPIC, p));
                }
            }
            String counts = String.format("connections=%d sent=%d acked=%d present=%d lost=%d duplicated=%d%n"
                            + "  baseline: %s%n  after:    %s",
                    CONNECTIONS, 2L * WARMUP_RECORDS + 40L * RECORDS_PER_CONNECTION + (long) CONNECTIONS * RECORDS_PER_CONNECTION,
                    acked, present, acked - Math.min(acked, present), Math.max(0, present - acked), baseline, after);
            LOG.info("ManyConnectionsTest: {}", counts);
            System.out.println("[reliability] ManyConnectionsTest " + counts);

            assertThat(wireAcked).isEqualTo((long) CONNECTIONS * RECORDS_PER_CONNECTION);
            assertThat(present).as("every acknowledged record stored, nothing else").isEqualTo(acked);
            assertThat(after.active()).isZero();
            assertThat(after.heap()).as("heap after GC").isLessThan(baseline.heap() + ((long) HEAP_SLACK_MIB << 20));
            if (baseline.nettyDirect() >= 0) {
                assertThat(after.nettyDirect()).as("Netty direct memory").isLessThan(baseline.nettyDirect() + ((long) DIRECT_SLACK_MIB << 20));
            }
            assertThat(after.threads()).as("live threads").isLessThan(baseline.threads() + THREAD_SLACK);
            assertThat(broker.isAlive()).isTrue();
        }
    }

    private static List<ProducerRecord> batch(int connection) {
        List<ProducerRecord> records = new ArrayList<>(RECORDS_PER_CONNECTION);
        for (int r = 0; r < RECORDS_PER_CONNECTION; r++) {
            records.add(ProducerRecord.of(TOPIC, (byte[]) null,
                    ("conn-" + connection + "-" + r + "-" + "x".repeat(80)).getBytes(StandardCharsets.UTF_8))
                    .withTimestamp(System.currentTimeMillis()));
        }
        return records;
    }

    /** A few short-lived raw connections, one batch each, closed in order. */
    private static long produceOverSockets(int port, int connections, int partition) throws Exception {
        long acked = 0;
        for (int i = 0; i < connections; i++) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
                s.setSoTimeout(30_000);
                s.getOutputStream().write(WireClient.produceFrame(7, Acks.JOURNAL, TOPIC, partition, batch(i)));
                WireClient.Response r = WireClient.Response.readProduce(new DataInputStream(new BufferedInputStream(s.getInputStream())), RECORDS_PER_CONNECTION);
                assertThat(r.errorCode()).isZero();
                acked += r.offsets().length;
            }
        }
        return acked;
    }

    private static long produceWithClient(String bootstrap, int records, String tag) throws Exception {
        try (RemoteProducer producer = new RemoteProducer(bootstrap, ProducerConfig.builder().acks(Acks.JOURNAL).build())) {
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>(records);
            for (int i = 0; i < records; i++) {
                futures.add(producer.send(ProducerRecord.of(TOPIC, null, tag + "-" + i)));
            }
            producer.flush();
            for (CompletableFuture<RecordMetadata> f : futures) {
                f.get(30, TimeUnit.SECONDS);
            }
            return records;
        }
    }

    private static StatsBroker.Snapshot awaitActiveConnections(BrokerProcess broker, long expected) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        StatsBroker.Snapshot s;
        while ((s = StatsBroker.Snapshot.of(broker)).active() != expected) {
            assertThat(System.nanoTime() - deadline).as("broker closes dropped connections within 60 s: %s", s).isNegative();
        }
        return s;
    }
}
