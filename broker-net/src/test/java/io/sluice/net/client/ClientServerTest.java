package io.sluice.net.client;

import io.sluice.core.Acks;
import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.RecordMetadata;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicDescription;
import io.sluice.core.TopicPartition;
import io.sluice.testkit.Await;
import io.sluice.net.testing.TestBroker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Java client against a real BrokerServer and core Broker over loopback sockets. */
class ClientServerTest {
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

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void everyAcknowledgedRecordIsReadBackOnceInOrderPerPartition() throws Exception {
        broker.broker.createTopic(TopicConfig.of("orders", 3));
        int n = 20_000;
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>(n);
        try (Producer producer = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            for (int i = 0; i < n; i++) {
                futures.add(producer.send(ProducerRecord.of("orders", "key-" + (i % 100), "value-" + i)));
            }
            producer.flush();
            for (CompletableFuture<RecordMetadata> f : futures) {
                assertThat(f).isDone();
            }
        }
        Map<Integer, List<Long>> offsets = new HashMap<>();
        for (CompletableFuture<RecordMetadata> f : futures) {
            RecordMetadata md = f.get();
            offsets.computeIfAbsent(md.partition(), p -> new ArrayList<>()).add(md.offset());
        }
        offsets.values().forEach(list -> {
            for (int i = 0; i < list.size(); i++) {
                assertThat(list.get(i)).as("dense offsets in send order").isEqualTo(i);
            }
        });

        List<ConsumerRecord> read = broker.readAll("orders", 3, n);
        assertThat(read).hasSize(n);
        Set<String> values = new HashSet<>();
        Map<Integer, Integer> lastIndexPerKey = new HashMap<>();
        for (ConsumerRecord r : read) {
            assertThat(values.add(r.valueAsString())).as("no duplicate").isTrue();
            int index = Integer.parseInt(r.valueAsString().substring("value-".length()));
            int key = Integer.parseInt(r.keyAsString().substring("key-".length()));
            assertThat(index).as("per-key order").isGreaterThan(lastIndexPerKey.getOrDefault(key, -1));
            lastIndexPerKey.put(key, index);
        }
    }

    @Test
    void keyedRecordsLandOnTheSamePartitionsAsWithTheEmbeddedProducer() throws Exception {
        broker.broker.createTopic(TopicConfig.of("keyed", 7));
        try (Producer embedded = broker.broker.newProducer(ProducerConfig.DEFAULT);
             Producer remote = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 50; i++) {
                ProducerRecord r = ProducerRecord.of("keyed", "customer-" + i, "x");
                assertThat(remote.send(r).get().partition()).isEqualTo(embedded.send(r).get().partition());
            }
        }
    }

    @Test
    void eachAcksLevelIsHonoured() throws Exception {
        broker.broker.createTopic(TopicConfig.of("acks", 1));
        for (Acks acks : Acks.values()) {
            try (Producer p = new RemoteProducer(broker.bootstrap(), ProducerConfig.builder().acks(acks).build())) {
                RecordMetadata md = p.send(ProducerRecord.of("acks", null, acks.name())).get(10, TimeUnit.SECONDS);
                assertThat(md.offset()).isEqualTo(acks == Acks.MEMORY ? -1 : (long) acks.ordinal());
            }
        }
        assertThat(broker.readAll("acks", 1, 3)).extracting(ConsumerRecord::valueAsString).containsExactly("MEMORY", "JOURNAL", "SYNC");
    }

    @Test
    void typedErrorsComeBackFromTheBroker() {
        broker.broker.createTopic(TopicConfig.of("small", 1));
        try (Producer p = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT);
             RemoteAdmin admin = new RemoteAdmin(broker.bootstrap())) {
            assertThatThrownBy(() -> p.send(ProducerRecord.of("missing", null, "x")).get())
                    .hasCauseInstanceOf(SluiceException.UnknownTopicException.class);
            assertThatThrownBy(() -> p.send(new ProducerRecord("small", 3, null, utf8("x"), List.of(), -1)).get())
                    .hasCauseInstanceOf(SluiceException.class).hasMessageContaining("partition 3 does not exist");
            assertThatThrownBy(() -> admin.createTopic(TopicConfig.of("small", 1)))
                    .isInstanceOf(SluiceException.TopicExistsException.class);
            assertThatThrownBy(() -> admin.describeTopic("missing")).isInstanceOf(SluiceException.UnknownTopicException.class);
        }
    }

    @Test
    void theAdminClientCreatesListsAndDescribesTopics() {
        try (RemoteAdmin admin = new RemoteAdmin(broker.bootstrap())) {
            admin.createTopic(TopicConfig.builder("b").partitions(2).retentionMillis(60_000).build());
            admin.createTopic(TopicConfig.of("a", 1));
            assertThat(admin.createTopicIfAbsent(TopicConfig.of("a", 5)).config().partitions()).isEqualTo(1);
            assertThat(admin.listTopics()).containsExactly("a", "b");
            TopicDescription d = admin.describeTopic("b");
            assertThat(d.config().retentionMillis()).isEqualTo(60_000);
            assertThat(d.partitions()).hasSize(2);
            assertThat(admin.endOffset(new TopicPartition("b", 1))).isZero();
        }
        assertThat(broker.broker.listTopics()).containsExactly("a", "b");
    }

    @Test
    void groupMembersSplitPartitionsAndANewMemberResumesFromCommittedOffsets() throws Exception {
        broker.broker.createTopic(TopicConfig.of("g", 4));
        try (Producer p = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 400; i++) {
                p.send(new ProducerRecord("g", i % 4, null, utf8("r" + i), List.of(), -1));
            }
            p.flush();
        }
        ConsumerConfig config = ConsumerConfig.builder().groupId("billing").offsetReset(OffsetReset.EARLIEST)
                .sessionTimeoutMillis(3_000).build();
        Set<String> seen = new HashSet<>();
        try (Consumer first = new RemoteConsumer(broker.bootstrap(), config);
             Consumer second = new RemoteConsumer(broker.bootstrap(), config)) {
            first.subscribe("g");
            second.subscribe("g");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < deadline
                    && !(first.assignment().size() == 2 && second.assignment().size() == 2)) {
                first.poll(Duration.ofMillis(50)).forEach(r -> seen.add(r.valueAsString()));
                second.poll(Duration.ofMillis(50)).forEach(r -> seen.add(r.valueAsString()));
            }
            assertThat(first.assignment()).hasSize(2).doesNotContainAnyElementsOf(second.assignment());
            while (seen.size() < 400 && System.nanoTime() < deadline) {
                first.poll(Duration.ofMillis(50)).forEach(r -> seen.add(r.valueAsString()));
                second.poll(Duration.ofMillis(50)).forEach(r -> seen.add(r.valueAsString()));
            }
            assertThat(seen).hasSize(400);
            first.commitSync();
            second.commitSync();
        }
        try (Producer p = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            p.send(new ProducerRecord("g", 2, null, utf8("after"), List.of(), -1)).get();
        }
        try (Consumer third = new RemoteConsumer(broker.bootstrap(), config)) {
            third.subscribe("g");
            List<ConsumerRecord> got = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (got.isEmpty() && System.nanoTime() < deadline) {
                got.addAll(third.poll(Duration.ofMillis(100)));
            }
            assertThat(got).extracting(ConsumerRecord::valueAsString).containsExactly("after");
            assertThat(third.committed(new TopicPartition("g", 2))).hasValue(100);
        }
    }

    @Test
    void seekMovesThePositionIncludingByTimestamp() throws Exception {
        broker.broker.createTopic(TopicConfig.of("s", 1));
        TopicPartition tp = new TopicPartition("s", 0);
        try (Producer p = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 10; i++) {
                p.send(new ProducerRecord("s", 0, null, utf8("t" + i), List.of(), 1_000L * i)).get();
            }
        }
        try (Consumer c = new RemoteConsumer(broker.bootstrap(), ConsumerConfig.builder().offsetReset(OffsetReset.LATEST).build())) {
            c.assign(Set.of(tp));
            assertThat(c.position(tp)).isEqualTo(10);
            c.seekToTimestamp(tp, 4_500);
            assertThat(c.position(tp)).isEqualTo(5);
            c.seek(tp, 8);
            List<ConsumerRecord> got = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (got.size() < 2 && System.nanoTime() < deadline) {
                got.addAll(c.poll(Duration.ofMillis(100)));
            }
            assertThat(got).extracting(ConsumerRecord::offset).containsExactly(8L, 9L);
            c.seekToBeginning(Set.of(tp));
            assertThat(c.position(tp)).isZero();
        }
    }

    @Test
    void aFullRingPausesTheConnectionAndLosesNothing() throws Exception {
        broker.close();
        broker = TestBroker.start(dir.resolve("small-ring"), b -> b.ringSize(64), s -> s);
        broker.broker.createTopic(TopicConfig.of("bp", 1));
        int n = 50_000;
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>(n);
        try (Producer p = new RemoteProducer(broker.bootstrap(), ProducerConfig.builder().acks(Acks.SYNC).build())) {
            for (int i = 0; i < n; i++) {
                futures.add(p.send(ProducerRecord.of("bp", null, "v" + i)));
            }
            p.flush();
        }
        for (CompletableFuture<RecordMetadata> f : futures) {
            f.get();
        }
        assertThat(broker.broker.endOffset(new TopicPartition("bp", 0))).isEqualTo(n);
        assertThat(broker.server().stats().producedRecords()).isEqualTo(n);
    }

    @Test
    void whenTheBrokerGoesAwayPendingSendsFailAndTheProducerReconnectsWhenItIsBack() throws Exception {
        broker.broker.createTopic(TopicConfig.of("r", 1));
        try (Producer p = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            assertThat(p.send(ProducerRecord.of("r", null, "before")).get().offset()).isZero();
            broker.stopServer();
            assertThatThrownBy(() -> p.send(ProducerRecord.of("r", null, "while-down")).get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(SluiceException.ClosedException.class);
            broker.restartServer();
            assertThat(p.send(ProducerRecord.of("r", null, "after")).get(10, TimeUnit.SECONDS).offset()).isEqualTo(1);
        }
    }

    @Test
    void garbageFromOneClientDoesNotDisturbAnother() throws Exception {
        broker.broker.createTopic(TopicConfig.of("x", 1));
        try (Producer p = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT);
             java.net.Socket raw = new java.net.Socket("127.0.0.1", Integer.parseInt(broker.bootstrap().split(":")[1]))) {
            raw.getOutputStream().write(new byte[] {0x7f, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8});
            raw.getOutputStream().flush();
            raw.setSoTimeout(10_000);
            assertThat(raw.getInputStream().read()).as("server closed the garbage connection").isEqualTo(-1);
            assertThat(p.send(ProducerRecord.of("x", null, "fine")).get(10, TimeUnit.SECONDS).offset()).isZero();
        }
        assertThat(broker.server().stats().protocolErrors()).isEqualTo(1);
    }

    @Test
    void aWrongTokenIsRefusedAndTheRightOneAccepted() throws Exception {
        broker.close();
        broker = TestBroker.start(dir.resolve("auth"), b -> b, s -> s.authToken("correct-horse-battery"));
        broker.broker.createTopic(TopicConfig.of("sec", 1));
        ClientConfig wrong = ClientConfig.builder(broker.bootstrap()).authToken("wrong-token-guess").build();
        assertThatThrownBy(() -> new RemoteAdmin(wrong)).isInstanceOf(SluiceException.class)
                .matches(e -> ((SluiceException) e).code() == SluiceException.Code.AUTHENTICATION_FAILED);
        assertThatThrownBy(() -> new RemoteAdmin(broker.bootstrap()).listTopics()).isInstanceOf(SluiceException.class)
                .matches(e -> ((SluiceException) e).code() == SluiceException.Code.AUTHENTICATION_FAILED);
        ClientConfig right = ClientConfig.builder(broker.bootstrap()).authToken("correct-horse-battery").build();
        try (RemoteProducer p = new RemoteProducer(RemoteProducerConfig.builder(right).build())) {
            assertThat(p.send(ProducerRecord.of("sec", null, "ok")).get().offset()).isZero();
        }
    }

    @Test
    void beforeAuthenticatingConnectionsAreBoundedDeadlinedAndHeldToSmallFramesOverRealSockets() throws Exception {
        broker.close();
        broker = TestBroker.start(dir.resolve("preauth"), b -> b, s -> s.authToken("correct-horse-battery")
                .authTimeoutMillis(500).maxUnauthenticatedConnections(2).authMaxFrameBytes(1024).ioThreads(1));
        broker.broker.createTopic(TopicConfig.of("sec", 1));
        int port = broker.server().port();
        try (java.net.Socket silent = rawConnect(port); java.net.Socket oversized = rawConnect(port)) {
            Await.until("two unauthenticated connections counted", Duration.ofSeconds(10),
                    () -> broker.server().stats().unauthenticatedConnections() == 2);
            try (java.net.Socket third = rawConnect(port)) {
                assertThat(closedByServer(third)).as("over maxUnauthenticatedConnections").isTrue();
            }
            // a frame of 1 MiB announced before authenticating: closed from its length field
            oversized.getOutputStream().write(new byte[] {0, 0x10, 0, 0, 0, 3, 0, 0, 0, 0, 0, 1});
            assertThat(closedByServer(oversized)).isTrue();
            // the silent one is closed at the auth deadline
            assertThat(closedByServer(silent)).isTrue();
        }
        Await.until("unauthenticated connections released", Duration.ofSeconds(10),
                () -> broker.server().stats().unauthenticatedConnections() == 0);
        assertThat(broker.server().stats().unauthenticatedRefused()).isEqualTo(1);
        assertThat(broker.server().stats().unauthenticatedCloses()).isEqualTo(2);
        // a client with the token: served, and its frames may be as large as maxFrameSize
        ClientConfig right = ClientConfig.builder(broker.bootstrap()).authToken("correct-horse-battery").build();
        try (RemoteProducer p = new RemoteProducer(RemoteProducerConfig.builder(right).build())) {
            assertThat(p.send(ProducerRecord.of("sec", null, "x".repeat(64 << 10))).get().offset()).isZero();
        }
    }

    private static java.net.Socket rawConnect(int port) throws java.io.IOException {
        java.net.Socket s = new java.net.Socket();
        s.connect(new java.net.InetSocketAddress("127.0.0.1", port), 10_000);
        s.setSoTimeout(30_000);
        return s;
    }

    /** True once the server closed the socket (end of stream or reset) within the socket's read timeout. */
    private static boolean closedByServer(java.net.Socket s) {
        try {
            return s.getInputStream().read() == -1;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (java.io.IOException reset) {
            return true;
        }
    }

    @Test
    void connectionsBeyondMaxConnectionsAreClosedAndCounted() throws Exception {
        broker.close();
        broker = TestBroker.start(dir.resolve("limit"), b -> b, s -> s.maxConnections(2));
        try (RemoteAdmin a = new RemoteAdmin(broker.bootstrap()); RemoteAdmin b = new RemoteAdmin(broker.bootstrap())) {
            // a request on each first: an answer means the server counted that connection (its channelActive ran on
            // its I/O thread); a TCP connect alone does not, and the third connection could be counted before the
            // second on another I/O thread (CI saw the third accepted and the second refused)
            assertThat(a.listTopics()).isEmpty();
            assertThat(b.listTopics()).isEmpty();
            assertThatThrownBy(() -> {
                try (RemoteAdmin c = new RemoteAdmin(broker.bootstrap())) {
                    c.listTopics();
                }
            }).isInstanceOf(SluiceException.class);
            assertThat(b.listTopics()).isEmpty();
        }
        assertThat(broker.server().stats().refusedConnections()).as("the client may retry once: each attempt is refused").isPositive();
    }

    @Test
    void closingTheServerAnswersInFlightProducesAndKeepsEveryAcknowledgedRecord() throws Exception {
        broker.broker.createTopic(TopicConfig.of("drain", 2));
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
        try (Producer p = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            for (int i = 0; i < 10_000; i++) {
                futures.add(p.send(ProducerRecord.of("drain", null, "d" + i)));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (futures.stream().noneMatch(CompletableFuture::isDone) && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            for (int i = 0; i < 10_000; i++) {
                futures.add(p.send(ProducerRecord.of("drain", null, "late" + i)));
            }
            broker.stopServer();
            p.flush();
        }
        long acknowledged = futures.stream().filter(f -> !f.isCompletedExceptionally()).count();
        long stored = broker.broker.endOffset(new TopicPartition("drain", 0)) + broker.broker.endOffset(new TopicPartition("drain", 1));
        assertThat(acknowledged).isGreaterThan(0);
        assertThat(stored).as("everything acknowledged is stored").isGreaterThanOrEqualTo(acknowledged);
        broker.restartServer();
    }

    @Test
    void aSlowDripClientIsClosedWhenItsFrameDoesNotCompleteInTime() throws Exception {
        broker.close();
        broker = TestBroker.start(dir.resolve("slow"), b -> b, s -> s.frameTimeoutMillis(300));
        try (java.net.Socket slow = new java.net.Socket("127.0.0.1", Integer.parseInt(broker.bootstrap().split(":")[1]));
             RemoteAdmin other = new RemoteAdmin(broker.bootstrap())) {
            slow.getOutputStream().write(new byte[] {0, 0, 0, 100, 0, 1});
            slow.getOutputStream().flush();
            slow.setSoTimeout(20_000);
            assertThat(slow.getInputStream().read()).as("server closed the slow connection").isEqualTo(-1);
            assertThat(other.listTopics()).isEmpty();
        }
        assertThat(broker.server().stats().protocolErrors()).isEqualTo(1);
    }

    @Test
    void aLongPollReturnsARecordProducedWhileItWaits() throws Exception {
        broker.broker.createTopic(TopicConfig.of("lp", 1));
        TopicPartition tp = new TopicPartition("lp", 0);
        try (Consumer c = new RemoteConsumer(broker.bootstrap(), ConsumerConfig.builder().offsetReset(OffsetReset.LATEST).build());
             Producer p = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            c.assign(Set.of(tp));
            CompletableFuture<List<ConsumerRecord>> polled = CompletableFuture.supplyAsync(() -> c.poll(Duration.ofSeconds(20)));
            p.send(ProducerRecord.of("lp", null, "late")).get();
            assertThat(polled.get(30, TimeUnit.SECONDS)).extracting(ConsumerRecord::valueAsString).containsExactly("late");
        }
    }

    @Test
    void anIdleConnectionIsClosedAfterTheIdleTimeout() throws Exception {
        broker.close();
        broker = TestBroker.start(dir.resolve("idle"), b -> b, s -> s.idleTimeoutMillis(200));
        try (java.net.Socket idle = new java.net.Socket("127.0.0.1", Integer.parseInt(broker.bootstrap().split(":")[1]))) {
            idle.setSoTimeout(20_000);
            assertThat(idle.getInputStream().read()).isEqualTo(-1);
        }
    }

    @Test
    void clientsThatVanishMidRequestLeaveTheBrokerServingOthers() throws Exception {
        broker.broker.createTopic(TopicConfig.of("gone", 1));
        int port = Integer.parseInt(broker.bootstrap().split(":")[1]);
        io.netty.buffer.ByteBuf frame = io.netty.buffer.Unpooled.buffer();
        int start = io.sluice.net.protocol.Frames.startRequest(frame, io.sluice.net.protocol.ApiKey.PRODUCE,
                io.sluice.net.protocol.Produce.VERSION_BATCH, 1);
        java.nio.ByteBuffer batch = java.nio.ByteBuffer.allocate(256);
        io.sluice.records.RecordBatchWriter writer = new io.sluice.records.RecordBatchWriter();
        writer.begin(batch, 0);
        writer.append(1L, null, -1, utf8("orphan"), utf8("orphan").length, List.of());
        int length = writer.finish(0);
        io.sluice.net.protocol.Produce.encodeBatch(frame, Acks.JOURNAL, "gone", 0, b -> b.writeBytes(batch.array(), 0, length));
        io.sluice.net.protocol.Frames.finish(frame, start);
        byte[] bytes = new byte[frame.readableBytes()];
        frame.readBytes(bytes);
        for (int cut : new int[] {3, 10, bytes.length / 2, bytes.length}) {
            try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
                s.getOutputStream().write(bytes, 0, cut);
                s.getOutputStream().flush();
            } // closed right away, before any answer
        }
        TopicPartition tp = new TopicPartition("gone", 0);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (broker.broker.endOffset(tp) < 1 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(broker.broker.endOffset(tp)).as("the one complete orphan request was written").isEqualTo(1);
        try (Producer p = new RemoteProducer(broker.bootstrap(), ProducerConfig.DEFAULT)) {
            RecordMetadata md = p.send(ProducerRecord.of("gone", null, "after")).get(10, TimeUnit.SECONDS);
            assertThat(md.offset()).isEqualTo(1);
        }
        assertThat(broker.readAll("gone", 1, 2)).extracting(ConsumerRecord::valueAsString).containsExactly("orphan", "after");
    }

    @Test
    void lingerGathersRecordsSentCloseTogetherIntoOneRequest() throws Exception {
        broker.broker.createTopic(TopicConfig.of("linger", 1));
        RemoteProducerConfig config = RemoteProducerConfig.builder(ClientConfig.of(broker.bootstrap()))
                .lingerMicros(TimeUnit.SECONDS.toMicros(2)).build();
        try (RemoteProducer p = new RemoteProducer(config)) {
            p.partitionCount("linger");
            long before = broker.server().stats().requests();
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                futures.add(p.send(ProducerRecord.of("linger", null, "l" + i)));
            }
            p.flush(); // flush sends at once, without waiting for the linger
            for (int i = 0; i < 100; i++) {
                assertThat(futures.get(i).get().offset()).isEqualTo(i);
            }
            assertThat(broker.server().stats().requests() - before).as("produce requests for 100 records").isEqualTo(1);
        }
    }

    @Test
    void severalThreadsSendingToSeveralPartitionsKeepEveryThreadsSendOrderInEachPartition() throws Exception {
        // the event loop keeps up with the senders, so a response often finds nothing ready to send while a sender
        // just closed a full batch: the interleaving that once sent a partition's newer open batch before its older
        // closed one (ClientServerTest.everyAcknowledgedRecordIsReadBackOnceInOrderPerPartition caught it)
        broker.broker.createTopic(TopicConfig.of("order", 3));
        RemoteProducerConfig config = RemoteProducerConfig.builder(ClientConfig.of(broker.bootstrap()))
                .batchSizeBytes(8 * 1024).build();
        int threads = 3;
        int perThread = 10_000;
        String pad = "p".repeat(200);
        List<List<CompletableFuture<RecordMetadata>>> sent = new ArrayList<>();
        try (RemoteProducer p = new RemoteProducer(config)) {
            p.partitionCount("order");
            List<Thread> senders = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                List<CompletableFuture<RecordMetadata>> mine = new ArrayList<>(perThread);
                sent.add(mine);
                int id = t;
                Thread sender = new Thread(() -> {
                    for (int i = 0; i < perThread; i++) {
                        mine.add(p.send(ProducerRecord.of("order", "k" + (i % 3), id + "-" + i + "-" + pad)));
                    }
                }, "sender-" + t);
                sender.start();
                senders.add(sender);
            }
            for (Thread t : senders) {
                t.join();
            }
            p.flush();
        }
        for (List<CompletableFuture<RecordMetadata>> mine : sent) {
            Map<Integer, Long> last = new HashMap<>();
            for (CompletableFuture<RecordMetadata> f : mine) {
                RecordMetadata md = f.get();
                assertThat(md.offset()).as("a thread's records are stored in its send order in partition %d", md.partition())
                        .isGreaterThan(last.getOrDefault(md.partition(), -1L));
                last.put(md.partition(), md.offset());
            }
        }
        List<ConsumerRecord> read = broker.readAll("order", 3, threads * perThread);
        assertThat(read).hasSize(threads * perThread);
    }
}
