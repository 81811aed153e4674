package io.sluice.net.client;

import io.netty.handler.ssl.SslContextBuilder;
import io.sluice.core.Acks;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.KeyPartitioner;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.RecordMetadata;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.net.testing.TestBroker;
import io.sluice.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The caller-thread client against a real BrokerServer over loopback sockets, and against peers that misbehave. */
class SyncProducerTest {
    @TempDir
    Path dir;
    private TestBroker broker;

    @BeforeEach
    void start() {
        broker = TestBroker.start(dir);
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    @Test
    void eachSendIsAcknowledgedBeforeItReturnsAndReadBackOnceAtItsOffset() throws Exception {
        broker.broker.createTopic(TopicConfig.of("orders", 3));
        int n = 2_000;
        List<RecordMetadata> acked = new ArrayList<>(n);
        try (SyncProducer producer = new SyncProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            for (int i = 0; i < n; i++) {
                String key = "key-" + (i % 50);
                CompletableFuture<RecordMetadata> f = producer.send(ProducerRecord.of("orders", key, "value-" + i));
                assertThat(f).as("complete when send returns").isDone();
                RecordMetadata md = f.get();
                assertThat(md.partition()).as("the key's partition, as every producer picks it")
                        .isEqualTo(KeyPartitioner.partition(key.getBytes(StandardCharsets.UTF_8), 3));
                acked.add(md);
            }
        }
        Map<Integer, Long> next = new HashMap<>();
        for (int i = 0; i < n; i++) {
            RecordMetadata md = acked.get(i);
            long expected = next.merge(md.partition(), 1L, Long::sum) - 1;
            assertThat(md.offset()).as("dense offsets in send order").isEqualTo(expected);
        }
        List<ConsumerRecord> read = broker.readAll("orders", 3, n);
        assertThat(read).hasSize(n);
        for (ConsumerRecord r : read) {
            int i = Integer.parseInt(r.valueAsString().substring("value-".length()));
            assertThat(r.partition()).isEqualTo(acked.get(i).partition());
            assertThat(r.offset()).as("stored at the acknowledged offset").isEqualTo(acked.get(i).offset());
        }
    }

    @Test
    void sendBatchSendsOneRequestPerPartitionAndCutsLargeBatches() throws Exception {
        broker.broker.createTopic(TopicConfig.of("batched", 4));
        List<ProducerRecord> records = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            records.add(new ProducerRecord("batched", i % 4, null, ("v" + i).getBytes(StandardCharsets.UTF_8), List.of(),
                    ProducerRecord.NO_TIMESTAMP));
        }
        byte[] big = new byte[300 << 10];
        for (int i = 0; i < 5; i++) {
            Arrays.fill(big, (byte) i);
            records.add(new ProducerRecord("big", 0, null, big.clone(), List.of(), ProducerRecord.NO_TIMESTAMP));
        }
        broker.broker.createTopic(TopicConfig.of("big", 1));
        try (SyncProducer producer = new SyncProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            producer.partitionCount("batched");
            producer.partitionCount("big");
            long before = broker.server().stats().requests();
            List<CompletableFuture<RecordMetadata>> futures = producer.sendBatch(records);
            long requests = broker.server().stats().requests() - before;
            assertThat(requests).as("4 partitions of small records, then 5 × 300 KiB cut at 1 MiB").isEqualTo(4 + 2);
            int[] seen = new int[4];
            for (int i = 0; i < 400; i++) {
                RecordMetadata md = futures.get(i).get();
                assertThat(md.partition()).isEqualTo(i % 4);
                assertThat(md.offset()).as("in order within the partition").isEqualTo(seen[i % 4]++);
            }
            for (int i = 0; i < 5; i++) {
                assertThat(futures.get(400 + i).get().offset()).isEqualTo(i);
            }
        }
        List<ConsumerRecord> big0 = broker.readAll("big", 1, 5);
        assertThat(big0).hasSize(5);
        for (ConsumerRecord r : big0) {
            assertThat(r.value()).hasSize(300 << 10).containsOnly((byte) r.offset());
        }
    }

    @Test
    void threadsSharingOneProducerTakeTurnsAndEveryOffsetIsGivenOnce() throws Exception {
        broker.broker.createTopic(TopicConfig.of("shared", 1));
        int threads = 4;
        int perThread = 300;
        ConcurrentLinkedQueue<Long> offsets = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        try (SyncProducer producer = new SyncProducer(broker.bootstrap(), ProducerConfig.builder().acks(Acks.JOURNAL).build())) {
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                Thread th = new Thread(() -> {
                    for (int i = 0; i < perThread; i++) {
                        try {
                            offsets.add(producer.send(ProducerRecord.of("shared", null, id + "-" + i)).get().offset());
                        } catch (Exception e) {
                            errors.add(e);
                        }
                    }
                }, "sync-sender-" + t);
                ts.add(th);
                th.start();
            }
            for (Thread th : ts) {
                th.join(TimeUnit.SECONDS.toMillis(60));
            }
        }
        assertThat(errors).isEmpty();
        assertThat(new HashSet<>(offsets)).hasSize(threads * perThread);
        assertThat(offsets.stream().mapToLong(Long::longValue).max().orElse(-1)).isEqualTo(threads * perThread - 1);
    }

    @Test
    void errorsAreTypedAndLeaveTheConnectionUsable() throws Exception {
        broker.broker.createTopic(TopicConfig.of("t", 2));
        ClientConfig small = ClientConfig.builder(broker.bootstrap()).maxFrameSize(64 << 10).build();
        try (SyncProducer producer = new SyncProducer(small, ProducerConfig.DEFAULT)) {
            assertThatThrownBy(() -> producer.send(ProducerRecord.of("missing", null, "x")).get())
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(SluiceException.UnknownTopicException.class);
            assertThatThrownBy(() -> producer.trySend(ProducerRecord.of("missing", null, "x"), (p, o, e) -> { }))
                    .isInstanceOf(SluiceException.UnknownTopicException.class);
            assertThatThrownBy(() -> producer.send(new ProducerRecord("t", 5, null, new byte[1], List.of(),
                    ProducerRecord.NO_TIMESTAMP)).get()).hasCauseInstanceOf(SluiceException.class)
                    .hasMessageContaining("partition 5 does not exist");
            assertThatThrownBy(() -> producer.send(new ProducerRecord("t", 0, null, new byte[100 << 10], List.of(),
                    ProducerRecord.NO_TIMESTAMP)).get()).hasCauseInstanceOf(SluiceException.RecordTooLargeException.class);
            long[] callback = {-2, -2};
            assertThat(producer.trySend(ProducerRecord.of("t", null, "fine"), (p, o, e) -> {
                callback[0] = p;
                callback[1] = o;
            })).isEqualTo(Producer.ACCEPTED);
            assertThat(callback[1]).as("the callback ran before trySend returned").isZero();
            assertThat(producer.send(ProducerRecord.of("t", null, "after the errors")).get().offset()).isZero();
        }
    }

    @Test
    void aBrokerErrorFailsTheSendAndNothingOfItIsStored() throws Exception {
        broker.close();
        broker = TestBroker.start(dir.resolve("limits"), b -> b.maxEventSize(1024), s -> s);
        broker.broker.createTopic(TopicConfig.of("t", 1));
        try (SyncProducer producer = new SyncProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            List<CompletableFuture<RecordMetadata>> futures = producer.sendBatch(List.of(
                    ProducerRecord.of("t", null, "small"), new ProducerRecord("t", 0, null, new byte[4096], List.of(),
                            ProducerRecord.NO_TIMESTAMP)));
            assertThat(futures).allSatisfy(f -> assertThat(f).isCompletedExceptionally());
            assertThatThrownBy(() -> futures.get(1).get()).hasCauseInstanceOf(SluiceException.RecordTooLargeException.class);
            assertThat(broker.broker.endOffset(new TopicPartition("t", 0))).as("the batch was refused whole").isZero();
            assertThat(producer.send(ProducerRecord.of("t", null, "next")).get().offset()).isZero();
        }
    }

    @Test
    void aWrongTokenIsRefusedTheRightOneAcceptedAndTlsRefusedWithAClearError() throws Exception {
        broker.close();
        broker = TestBroker.start(dir.resolve("auth"), b -> b, s -> s.authToken("correct-horse-battery"));
        broker.broker.createTopic(TopicConfig.of("sec", 1));
        ClientConfig wrong = ClientConfig.builder(broker.bootstrap()).authToken("wrong-token-guess").build();
        assertThatThrownBy(() -> new SyncProducer(wrong, ProducerConfig.DEFAULT)).isInstanceOf(SluiceException.class)
                .matches(e -> ((SluiceException) e).code() == SluiceException.Code.AUTHENTICATION_FAILED);
        try (SyncProducer none = new SyncProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            assertThatThrownBy(() -> none.send(ProducerRecord.of("sec", null, "x")).get()).hasCauseInstanceOf(SluiceException.class)
                    .matches(e -> ((SluiceException) e.getCause()).code() == SluiceException.Code.AUTHENTICATION_FAILED);
        }
        ClientConfig right = ClientConfig.builder(broker.bootstrap()).authToken("correct-horse-battery").build();
        try (SyncProducer p = new SyncProducer(right, ProducerConfig.DEFAULT)) {
            assertThat(p.send(ProducerRecord.of("sec", null, "ok")).get().offset()).isZero();
        }
        ClientConfig tls = ClientConfig.builder(broker.bootstrap()).sslContext(SslContextBuilder.forClient().build()).build();
        assertThatThrownBy(() -> new SyncProducer(tls, ProducerConfig.DEFAULT))
                .isInstanceOf(SluiceException.InvalidConfigException.class).hasMessageContaining("sslContext");
    }

    @Test
    void aLostConnectionFailsTheSendOnItAndTheNextSendConnectsAgain() throws Exception {
        broker.broker.createTopic(TopicConfig.of("t", 1));
        try (SyncProducer producer = new SyncProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            assertThat(producer.send(ProducerRecord.of("t", null, "first")).get().offset()).isZero();
            broker.stopServer(); // the connection is cut: the broker's port closes
            assertThatThrownBy(() -> producer.send(ProducerRecord.of("t", null, "lost")).get())
                    .hasCauseInstanceOf(SluiceException.ClosedException.class);
            broker.restartServer();
            RecordMetadata md = producer.send(ProducerRecord.of("t", null, "after")).get();
            assertThat(md.offset()).as("nothing of the failed send was stored: the server was gone").isEqualTo(1);
        }
        List<ConsumerRecord> read = broker.readAll("t", 1, 2);
        assertThat(read).extracting(ConsumerRecord::valueAsString).containsExactly("first", "after");
    }

    @Test
    void aPeerThatStopsAnsweringTimesOutTheSendAndTheConnectionIsClosed() throws Exception {
        try (SilentPeer peer = new SilentPeer()) {
            ClientConfig config = ClientConfig.builder("127.0.0.1:" + peer.port()).requestTimeoutMillis(1_000).build();
            try (SyncProducer producer = new SyncProducer(config, ProducerConfig.DEFAULT)) {
                long t0 = System.nanoTime();
                assertThatThrownBy(() -> producer.send(ProducerRecord.of("t", null, "x")).get())
                        .hasCauseInstanceOf(SluiceException.class)
                        .matches(e -> ((SluiceException) e.getCause()).code() == SluiceException.Code.TIMEOUT);
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isBetween(900L, 8_000L);
                assertThat(peer.received()).as("the request reached the peer").isPositive();
                Await.until("the timed-out connection was closed", Duration.ofSeconds(10), peer::sawClose);
            }
        }
    }

    @Test
    void anAuthenticationThePeerNeverAnswersFailsWithinTheConnectTimeout() throws Exception {
        try (SilentPeer peer = new SilentPeer()) {
            ClientConfig config = ClientConfig.builder("127.0.0.1:" + peer.port()).authToken("correct-horse-battery")
                    .connectTimeoutMillis(500).requestTimeoutMillis(60_000).build();
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> new SyncProducer(config, ProducerConfig.DEFAULT)).isInstanceOf(SluiceException.class)
                    .matches(e -> ((SluiceException) e).code() == SluiceException.Code.TIMEOUT)
                    .hasMessageContaining("within 500 ms");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isBetween(450L, 8_000L);
            Await.until("the connection was closed", Duration.ofSeconds(10), peer::sawClose);
        }
    }

    @Test
    void theThreadThatEnforcesDeadlinesRunsOnlyWhileAConnectionIsOpen() throws Exception {
        Await.until("no deadline thread before the first connection", Duration.ofSeconds(10), () -> !deadlineThreadRuns());
        broker.broker.createTopic(TopicConfig.of("t", 1));
        try (SyncProducer first = new SyncProducer(broker.bootstrap(), ProducerConfig.DEFAULT);
             SyncProducer second = new SyncProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            assertThat(deadlineThreadRuns()).isTrue();
            first.close();
            assertThat(second.send(ProducerRecord.of("t", null, "x")).get().offset()).isNotNegative();
            assertThat(deadlineThreadRuns()).as("one connection is still open").isTrue();
        }
        Await.until("the deadline thread ended with the last connection", Duration.ofSeconds(10), () -> !deadlineThreadRuns());
    }

    private static boolean deadlineThreadRuns() {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals("sluice-call-deadlines") && t.isAlive());
    }

    @Test
    void whileOneThreadsSendIsOnTheWireOtherThreadsAreToldBackPressured() throws Exception {
        try (SilentPeer peer = new SilentPeer()) {
            ClientConfig config = ClientConfig.builder("127.0.0.1:" + peer.port()).requestTimeoutMillis(60_000).build();
            try (SyncProducer producer = new SyncProducer(config, ProducerConfig.builder().maxBlockMillis(50).build())) {
                CompletableFuture<RecordMetadata> onTheWire = CompletableFuture.supplyAsync(
                        () -> producer.send(ProducerRecord.of("t", null, "x")).join());
                Await.until("the request reached the silent peer", Duration.ofSeconds(10), () -> peer.received() > 0);
                assertThat(producer.trySend(ProducerRecord.of("t", null, "y"), (p, o, e) -> { }))
                        .as("another thread's send is on the wire").isEqualTo(Producer.BACK_PRESSURED);
                assertThatThrownBy(() -> producer.send(ProducerRecord.of("t", null, "z")).get())
                        .hasCauseInstanceOf(SluiceException.BackPressureException.class);
                peer.close(); // the broker goes away under the send on the wire
                assertThatThrownBy(() -> onTheWire.get(10, TimeUnit.SECONDS))
                        .hasRootCauseInstanceOf(SluiceException.ClosedException.class);
            }
        }
    }

    @Test
    void anAnswerCutShortOrOversizedFailsTheSendAndClosesTheConnection() throws Exception {
        // the peer answers METADATA with the first half of a frame, then closes
        try (SilentPeer cut = new SilentPeer(out -> writeHalfFrame(out), true);
             SyncProducer producer = new SyncProducer(ClientConfig.of("127.0.0.1:" + cut.port()), ProducerConfig.DEFAULT)) {
            assertThatThrownBy(() -> producer.send(ProducerRecord.of("t", null, "x")).get())
                    .hasCauseInstanceOf(SluiceException.ClosedException.class).hasMessageContaining("closed the connection");
        }
        // the peer announces a frame larger than the client accepts
        try (SilentPeer huge = new SilentPeer(out -> writeLength(out, 512 << 20), false);
             SyncProducer producer = new SyncProducer(ClientConfig.of("127.0.0.1:" + huge.port()), ProducerConfig.DEFAULT)) {
            assertThatThrownBy(() -> producer.send(ProducerRecord.of("t", null, "x")).get())
                    .hasCauseInstanceOf(SluiceException.class).hasMessageContaining("maxFrameSize");
            Await.until("the connection was closed", Duration.ofSeconds(10), huge::sawClose);
        }
    }

    @Test
    void aClosedProducerRefusesSends() {
        try (SyncProducer producer = new SyncProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            producer.close();
            assertThat(producer.trySend(ProducerRecord.of("t", null, "x"), (p, o, e) -> { })).isEqualTo(Producer.CLOSED);
            assertThatThrownBy(() -> producer.send(ProducerRecord.of("t", null, "x")).get())
                    .hasCauseInstanceOf(SluiceException.ClosedException.class);
        }
    }

    private static void writeHalfFrame(DataOutputStream out) {
        try {
            out.writeInt(100);
            out.write(new byte[50]);
            out.flush();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void writeLength(DataOutputStream out, int length) {
        try {
            out.writeInt(length);
            out.flush();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A peer on a real loopback socket that reads what it is sent and never answers (or, given {@code answer}, writes
     * that once after the first bytes arrive, then closes or goes on reading): a broker that is paused, or that
     * breaks mid-answer. {@link #sawClose} turns true when the client closed the connection.
     */
    private static final class SilentPeer implements AutoCloseable {
        private final ServerSocket server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        private final AtomicLong received = new AtomicLong();
        private volatile boolean sawClose;
        private volatile Socket accepted;
        private final Thread thread;

        SilentPeer() throws IOException {
            this(null, false);
        }

        SilentPeer(java.util.function.Consumer<DataOutputStream> answer, boolean closeAfterAnswer) throws IOException {
            thread = new Thread(() -> {
                try (Socket s = server.accept()) {
                    accepted = s;
                    InputStream in = s.getInputStream();
                    DataOutputStream out = new DataOutputStream(s.getOutputStream());
                    byte[] buf = new byte[8192];
                    int n;
                    boolean answered = false;
                    while ((n = in.read(buf)) > 0) {
                        received.addAndGet(n);
                        if (answer != null && !answered) {
                            answer.accept(out);
                            answered = true;
                            if (closeAfterAnswer) {
                                return;
                            }
                        }
                    }
                    sawClose = true;
                } catch (IOException e) {
                    sawClose = true;
                }
            }, "silent-peer");
            thread.setDaemon(true);
            thread.start();
        }

        int port() {
            return server.getLocalPort();
        }

        long received() {
            return received.get();
        }

        boolean sawClose() {
            return sawClose;
        }

        @Override
        public void close() throws IOException {
            server.close();
            Socket s = accepted;
            if (s != null) {
                s.close();
            }
        }
    }
}
