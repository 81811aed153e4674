package io.sluice.net.reliability;

import io.sluice.core.Acks;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.RecordMetadata;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.net.client.RemoteAdmin;
import io.sluice.net.client.RemoteConsumer;
import io.sluice.net.client.RemoteProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * <b>Promise:</b> a network consumer that stops reading its socket (a stalled or vanished fetcher) neither stalls
 * producers nor other consumers, and costs the broker bounded memory: at most {@code maxInFlightPerConnection}
 * responses of at most about twice the fetch's max bytes each (the broker stops reading the connection once its
 * socket is not writable or that many requests are unanswered); the idle timeout then closes the connection and the
 * memory is returned.
 *
 * <p>The stalled fetcher is a plain socket with a small receive buffer that pipelines {@value #FETCHES} fetches of up
 * to {@value #FETCH_MAX_BYTES} bytes from offset 0 of a partition holding ~{@value #RECORDS} KiB, then never reads.
 * Meanwhile a {@link RemoteProducer} must get {@value #RECORDS_WHILE_STALLED} more records acknowledged and a healthy
 * {@link RemoteConsumer} must read them. Memory is measured in the child broker after full GCs.
 */
class StalledFetcherTest {
    private static final Logger LOG = LoggerFactory.getLogger(StalledFetcherTest.class);
    static final int MAX_IN_FLIGHT = 16;
    static final int FETCHES = 2_000;
    static final int FETCH_MAX_BYTES = 1 << 20;
    static final int RECORDS = 16_000;
    /** Produced (and read by a healthy consumer) while the fetcher is stalled: kept small so this fits well inside the idle timeout. */
    static final int RECORDS_WHILE_STALLED = 4_000;
    private static final int RECORD_SIZE = 1_000;
    /** Ends the vanished fetcher (its requests are all answered into its unread socket, so it is idle). */
    private static final long IDLE_TIMEOUT_MILLIS = 8_000;
    private static final String TOPIC = "slow";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @TempDir
    Path dir;

    @Test
    void aFetcherThatStopsReadingCostsBoundedMemoryAndStallsNoProducerNorOtherConsumer() throws Exception {
        try (BrokerProcess broker = BrokerProcess.start(StatsBroker.class, dir.resolve("broker.log"), "256m",
                dir.resolve("data").toString(), "0", "100", Integer.toString(MAX_IN_FLIGHT), Long.toString(IDLE_TIMEOUT_MILLIS))) {
            String bootstrap = "127.0.0.1:" + broker.awaitLine(StatsBroker.LISTENING, Duration.ofSeconds(60)).group(1);
            int port = Integer.parseInt(bootstrap.substring(bootstrap.indexOf(':') + 1));
            try (RemoteAdmin admin = new RemoteAdmin(bootstrap)) {
                admin.createTopic(TopicConfig.of(TOPIC, 1));
            }
            long acked = produce(bootstrap, RECORDS);
            assertThat(consume(bootstrap, 0, acked)).isEqualTo(acked); // warms the fetch path before the baseline
            StatsBroker.Snapshot baseline = awaitActive(broker, 0);

            StatsBroker.Snapshot stalled;
            StatsBroker.Snapshot after;
            long consumedByHealthy;
            try (Socket fetcher = new Socket()) {
                fetcher.setReceiveBufferSize(4096);
                fetcher.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
                OutputStream out = fetcher.getOutputStream();
                for (int i = 0; i < FETCHES; i++) {
                    out.write(WireClient.fetchFrame(i, TP, 0, FETCH_MAX_BYTES, 0));
                }
                out.flush();
                // the broker starts fetches until the socket is no longer writable, then stops reading the connection
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                StatsBroker.Snapshot s;
                while ((s = StatsBroker.Snapshot.of(broker)).fetched() == baseline.fetched()) {
                    assertThat(System.nanoTime() - deadline).as("fetches started: %s", s).isNegative();
                }
                acked += produce(bootstrap, RECORDS_WHILE_STALLED); // producers are not stalled by the stalled fetcher
                consumedByHealthy = consume(bootstrap, RECORDS, RECORDS_WHILE_STALLED); // nor are other consumers
                // the healthy clients just closed: wait until the broker saw that, leaving the stalled connection
                long closeDeadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while ((stalled = StatsBroker.Snapshot.of(broker)).active() > 1) {
                    assertThat(System.nanoTime() - closeDeadline).as("closed clients released: %s", stalled).isNegative();
                }
                LOG.info("while a fetcher is stalled: {}", stalled);
                assertThat(stalled.active()).as("the stalled connection was still open while producing, consuming and "
                        + "measuring (if not, this machine took longer than idleTimeoutMillis=%d)", IDLE_TIMEOUT_MILLIS)
                        .isEqualTo(1);
                assertThat(stalled.requests() - baseline.requests())
                        .as("requests the broker took (all connections): it stopped reading the stalled one")
                        .isLessThan(FETCHES / 2);
                // The fetcher has vanished without a word (socket open, never read): only the broker's idle timeout
                // can end it, and must free what the connection held.
                after = awaitActive(broker, 0);
            }
            long boundBytes = (long) MAX_IN_FLIGHT * 2 * FETCH_MAX_BYTES + (16L << 20);
            String counts = String.format("fetchesPipelined=%d requestsTakenByBroker(all connections)=%d sent=%d acked=%d consumedWhileStalledByHealthyConsumer=%d "
                            + "lost=%d duplicated=0%n  baseline: %s%n  stalled:  %s%n  after:    %s%n  bound on stalled direct growth: %s",
                    FETCHES, stalled.requests() - baseline.requests(), (long) RECORDS + RECORDS_WHILE_STALLED, acked, consumedByHealthy,
                    RECORDS_WHILE_STALLED - consumedByHealthy, baseline, stalled, after, StatsBroker.Snapshot.mib(boundBytes));
            LOG.info("StalledFetcherTest: {}", counts);
            System.out.println("[reliability] StalledFetcherTest " + counts);

            assertThat(acked).isEqualTo((long) RECORDS + RECORDS_WHILE_STALLED);
            assertThat(consumedByHealthy).isEqualTo(RECORDS_WHILE_STALLED);
            assertThat(stalled.heap()).as("heap while stalled").isLessThan(baseline.heap() + (64L << 20));
            if (baseline.nettyDirect() >= 0) {
                assertThat(stalled.nettyDirect()).as("direct memory while stalled").isLessThan(baseline.nettyDirect() + boundBytes);
                assertThat(after.nettyDirect()).as("direct memory after the stalled connection closed")
                        .isLessThan(baseline.nettyDirect() + (16L << 20));
            }
            assertThat(after.heap()).as("heap after").isLessThan(baseline.heap() + (32L << 20));
        }
    }

    private static long produce(String bootstrap, int records) throws Exception {
        byte[] pad = new byte[RECORD_SIZE];
        java.util.Arrays.fill(pad, (byte) 'x');
        try (RemoteProducer producer = new RemoteProducer(bootstrap, ProducerConfig.builder().acks(Acks.JOURNAL).build())) {
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>(records);
            for (int i = 0; i < records; i++) {
                futures.add(producer.send(ProducerRecord.of(TOPIC, (byte[]) null, pad)));
            }
            producer.flush();
            for (CompletableFuture<RecordMetadata> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        }
        return records;
    }

    /** Reads {@code expected} records from offset {@code from} with a well-behaved consumer; returns how many it got. */
    private static long consume(String bootstrap, long from, long expected) {
        long n = 0;
        try (RemoteConsumer c = new RemoteConsumer(bootstrap, ConsumerConfig.builder().clientId("healthy").maxPollRecords(5_000).build())) {
            c.assign(Set.of(TP));
            c.seek(TP, from);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            long next = from;
            while (n < expected) {
                assertThat(System.nanoTime() - deadline).as("healthy consumer read %d of %d within 60 s", n, expected).isNegative();
                for (ConsumerRecord r : c.poll(Duration.ofMillis(500))) {
                    assertThat(r.offset()).isEqualTo(next++);
                    n++;
                }
            }
        }
        return n;
    }

    private static StatsBroker.Snapshot awaitActive(BrokerProcess broker, long expected) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        StatsBroker.Snapshot s;
        while ((s = StatsBroker.Snapshot.of(broker)).active() != expected) {
            assertThat(System.nanoTime() - deadline).as("active connections back to %d within 60 s: %s", expected, s).isNegative();
        }
        return s;
    }
}
