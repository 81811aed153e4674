package io.sluice.net.reliability;

import io.sluice.core.Acks;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.cli.SluiceCli;
import io.sluice.net.client.ClientConfig;
import io.sluice.net.client.RemoteAdmin;
import io.sluice.net.client.RemoteConsumer;
import io.sluice.net.client.RemoteProducer;
import io.sluice.net.client.RemoteProducerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * <b>Promise:</b> an event the network broker acknowledged with {@code acks=journal} survives SIGKILL of the broker
 * process, at the partition and offset it was acknowledged with; offsets stay dense across restarts; a consumer
 * group's committed offsets survive and a new member resumes exactly at them.
 *
 * <p>The broker is the real {@code sluice broker} command ({@link SluiceCli}) in a child JVM on a fixed loopback port
 * and data directory. One {@link RemoteProducer} sends a steady load (as fast as the broker acknowledges, bounded by
 * the client's buffer memory) while a group member consumes and commits; the broker is SIGKILLed mid-load, restarted
 * on the same data directory and port, and the <em>same</em> producer reconnects. {@value #ROUNDS} kills per test.
 *
 * <p><b>Producer retry semantics:</b> {@link RemoteProducer} does not retry. When the connection drops, the records in
 * flight fail with {@code ClosedException} — their outcome is unknown (stored or not) — and the next send reconnects.
 * This test does not re-send failed records, so no duplicate can come from the client: any record stored twice would
 * be a broker bug, hence duplicates are counted and asserted to be 0. Failed sends that were stored anyway are
 * counted as "ambiguous" (legitimate: the journal wrote them, the acknowledgement died with the process).
 *
 * <p>Prints: sent, acknowledged, failed, present after restart, lost (asserted 0), duplicated (asserted 0),
 * ambiguous, committed offsets.
 */
class BrokerCrashUnderLoadTest {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerCrashUnderLoadTest.class);
    private static final Pattern LISTENING = Pattern.compile("binary protocol on ([0-9.]+):(\\d+)");
    private static final String TOPIC = "crash";
    private static final String GROUP = "auditors";
    private static final int PARTITIONS = 2;
    static final int ROUNDS = 3;
    /** Acknowledgements to collect in each round before the kill: the kill lands while the load still runs. */
    private static final int ACKS_PER_ROUND = 20_000;
    private static final Duration ROUND_DEADLINE = Duration.ofSeconds(90);

    @TempDir
    Path dir;

    @Test
    void everyAcknowledgedEventSurvivesRepeatedSigkillsUnderLoadAndTheGroupResumesFromItsCommit() throws Exception {
        Path data = dir.resolve("data");
        int port = BrokerProcess.freePort();
        String bootstrap = "127.0.0.1:" + port;
        Ledger ledger = new Ledger();
        AtomicLongArray committed = new AtomicLongArray(PARTITIONS);
        RemoteProducer producer = null;
        int kills = 0;
        try {
            for (int round = 0; round < ROUNDS; round++) {
                try (BrokerProcess broker = startBroker(data, port, round)) {
                    if (round == 0) {
                        try (RemoteAdmin admin = new RemoteAdmin(bootstrap)) {
                            admin.createTopicIfAbsent(TopicConfig.of(TOPIC, PARTITIONS));
                        }
                        producer = new RemoteProducer(RemoteProducerConfig.builder(client(bootstrap, "crash-producer"))
                                .producer(ProducerConfig.builder().acks(Acks.JOURNAL).maxBlockMillis(5_000).build())
                                .build());
                    }
                    long target = ledger.acked() + ACKS_PER_ROUND;
                    try (Load load = new Load(producer, ledger); Auditor auditor = new Auditor(bootstrap, committed)) {
                        await(() -> ledger.acked() >= target && auditor.commits.get() > 0,
                                "round " + round + ": " + ACKS_PER_ROUND + " acknowledgements and a group commit", broker);
                        broker.sigkill(); // the load thread is still sending: the kill lands mid-batch
                        kills++;
                    }
                    LOG.info("round {}: SIGKILL after sent={} acked={} failed={} failures={}", round, ledger.sent.get(),
                            ledger.acked(), ledger.failed.sum(), ledger.failures);
                }
            }
            final RemoteProducer p = producer;
            await(() -> ledger.sent.get() == ledger.acked() + ledger.failed.sum(),
                    "every send resolved (acknowledged or failed)", null);

            try (BrokerProcess broker = startBroker(data, port, ROUNDS)) {
                Verdict v = readBack(bootstrap, ledger);
                // one more record per partition, so a record follows every committed offset even when the auditor had
                // read (and committed) to the end before a kill: the new member's first records prove where it resumed
                // (a send on the connection the last kill broke may fail: it reconnects, and the next one is sent again)
                for (int partition = 0; partition < PARTITIONS; partition++) {
                    int target = partition;
                    io.sluice.testkit.Await.until("a record after the commits in partition " + target, ROUND_DEADLINE, () -> {
                        try {
                            p.send(ProducerRecord.of(TOPIC, (byte[]) null, valueOf(-1)).withPartition(target)).get(30, TimeUnit.SECONDS);
                            return true;
                        } catch (Exception e) {
                            LOG.info("record after the commits: {}", e.toString());
                            return false;
                        }
                    });
                }
                long[] resumedAt = resumeGroup(bootstrap, committed);
                p.close();
                String counts = String.format("kills=%d sent=%d acked=%d failed=%d present=%d lost=%d duplicated=%d "
                                + "ambiguous(failed but stored)=%d committed=%s resumedAt=%s",
                        kills, ledger.sent.get(), ledger.acked(), ledger.failed.sum(), v.present, v.lost, v.duplicated,
                        v.ambiguous, committed, java.util.Arrays.toString(resumedAt));
                LOG.info("BrokerCrashUnderLoadTest: {}", counts);
                System.out.println("[reliability] BrokerCrashUnderLoadTest " + counts);
                assertThat(kills).isEqualTo(ROUNDS);
                assertThat(ledger.acked()).isGreaterThanOrEqualTo((long) ROUNDS * ACKS_PER_ROUND);
                assertThat(v.lost).as("acknowledged events missing or moved after restart").isZero();
                assertThat(v.duplicated).as("events stored twice (the client never retries)").isZero();
                assertThat(v.present).isEqualTo(ledger.acked() + v.ambiguous);
                assertThat(broker.isAlive()).isTrue();
            }
        } finally {
            if (producer != null) {
                closeQuietly(producer);
            }
        }
    }

    private static BrokerProcess startBroker(Path data, int port, int round) throws Exception {
        BrokerProcess broker = BrokerProcess.start(SluiceCli.class, data.resolveSibling("broker-" + round + ".log"), "256m",
                "broker", "--data-dir", data.toString(), "--port", Integer.toString(port), "--http-port", "0");
        broker.awaitLine(LISTENING, Duration.ofSeconds(60));
        return broker;
    }

    private static ClientConfig client(String bootstrap, String id) {
        return ClientConfig.builder(bootstrap).clientId(id).connectTimeoutMillis(2_000).requestTimeoutMillis(10_000).build();
    }

    /** Reads both partitions from the start: dense offsets, every acknowledged event where it was acknowledged. */
    private static Verdict readBack(String bootstrap, Ledger ledger) {
        Map<Long, Integer> copies = new HashMap<>();
        Map<Long, Long> storedAt = new HashMap<>();
        long present = 0;
        try (RemoteAdmin admin = new RemoteAdmin(bootstrap);
             RemoteConsumer reader = new RemoteConsumer(client(bootstrap, "verifier"),
                     ConsumerConfig.builder().clientId("verifier").maxPollRecords(10_000).build())) {
            Set<TopicPartition> all = Set.of(new TopicPartition(TOPIC, 0), new TopicPartition(TOPIC, 1));
            reader.assign(all);
            reader.seekToBeginning(all);
            long[] next = new long[PARTITIONS];
            long total = 0;
            for (TopicPartition tp : all) {
                assertThat(admin.startOffset(tp)).isZero();
                total += admin.endOffset(tp);
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (present < total) {
                assertThat(System.nanoTime() - deadline).as("read back %d of %d within 60 s", present, total).isNegative();
                for (ConsumerRecord r : reader.poll(Duration.ofMillis(500))) {
                    assertThat(r.offset()).as("dense offsets in partition %d", r.partition()).isEqualTo(next[r.partition()]);
                    next[r.partition()]++;
                    long id = idOf(r.value());
                    copies.merge(id, 1, Integer::sum);
                    storedAt.put(id, Ledger.pack(r.partition(), r.offset()));
                    present++;
                }
            }
        }
        long lost = 0;
        for (Map.Entry<Long, Long> e : ledger.acked.entrySet()) {
            if (!e.getValue().equals(storedAt.get(e.getKey()))) {
                lost++;
            }
        }
        long duplicated = copies.values().stream().filter(c -> c > 1).mapToLong(c -> c - 1).sum();
        long ambiguous = copies.keySet().stream().filter(id -> !ledger.acked.containsKey(id)).count();
        return new Verdict(present, lost, duplicated, ambiguous);
    }

    /**
     * A new member of the group gets every partition at (at least) the last offset a commit was acknowledged for, and its
     * first records start exactly at the broker's committed offsets.
     */
    private static long[] resumeGroup(String bootstrap, AtomicLongArray lastAcknowledgedCommit) {
        long[] resumedAt = new long[PARTITIONS];
        try (RemoteConsumer member = new RemoteConsumer(client(bootstrap, "resumer"), ConsumerConfig.builder()
                .groupId(GROUP).clientId("resumer").offsetReset(OffsetReset.LATEST).maxPollRecords(1_000).build())) {
            member.subscribe(TOPIC);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (member.assignment().size() < PARTITIONS) {
                assertThat(System.nanoTime() - deadline).as("all partitions assigned within 30 s").isNegative();
                member.poll(Duration.ofMillis(100));
            }
            Map<Integer, Long> firstOffset = new HashMap<>();
            for (TopicPartition tp : member.assignment()) {
                long c = member.committed(tp).orElseThrow();
                assertThat(c).as("committed offset of %s survived", tp).isGreaterThanOrEqualTo(lastAcknowledgedCommit.get(tp.partition()));
                assertThat(member.position(tp)).as("new member starts at the committed offset of %s", tp).isEqualTo(c);
                resumedAt[tp.partition()] = c;
            }
            while (firstOffset.size() < PARTITIONS) {
                assertThat(System.nanoTime() - deadline).as("records after the committed offsets within 30 s").isNegative();
                for (ConsumerRecord r : member.poll(Duration.ofMillis(200))) {
                    firstOffset.putIfAbsent(r.partition(), r.offset());
                }
            }
            for (int p = 0; p < PARTITIONS; p++) {
                assertThat(firstOffset.get(p)).as("first record of partition %d after resuming", p).isEqualTo(resumedAt[p]);
            }
        }
        return resumedAt;
    }

    private static long idOf(byte[] value) {
        String s = new String(value, StandardCharsets.UTF_8);
        int end = s.indexOf(' ');
        return Long.parseLong(s.substring(3, end)); // "id-<n> padding"
    }

    private static byte[] valueOf(long id) {
        StringBuilder sb = new StringBuilder(100).append("id-").append(id).append(' ');
        while (sb.length() < 100) {
            sb.append('x');
        }
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static void await(BooleanSupplier condition, String what, BrokerProcess broker) {
        io.sluice.testkit.Await.until(() -> what + (broker != null ? "; broker log:\n" + broker.log() : ""),
                ROUND_DEADLINE, condition);
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.info("close after the test: {}", e.toString());
        }
    }

    private record Verdict(long present, long lost, long duplicated, long ambiguous) {
    }

    /** What the producer was told: id -> (partition, offset) for each acknowledgement; failures counted. */
    static final class Ledger {
        final AtomicLong sent = new AtomicLong();
        final ConcurrentHashMap<Long, Long> acked = new ConcurrentHashMap<>();
        final LongAdder failed = new LongAdder();
        /** Failures by exception type and message (digits elided), for the log. */
        final ConcurrentHashMap<String, LongAdder> failures = new ConcurrentHashMap<>();

        void fail(Throwable error) {
            failed.increment();
            failures.computeIfAbsent(error.getClass().getSimpleName() + ": "
                    + String.valueOf(error.getMessage()).replaceAll("[0-9]+", "N"), k -> new LongAdder()).increment();
        }

        long acked() {
            return acked.size();
        }

        static long pack(int partition, long offset) {
            return ((long) partition << 48) | offset;
        }
    }

    /** The steady load: one thread sending as fast as the producer's buffer memory lets it, until closed. */
    private static final class Load implements AutoCloseable {
        private final Thread thread;
        private volatile boolean running = true;

        Load(RemoteProducer producer, Ledger ledger) {
            thread = new Thread(() -> {
                while (running) {
                    long id = ledger.sent.getAndIncrement();
                    int partition = (int) (id % PARTITIONS);
                    producer.send(ProducerRecord.of(TOPIC, (byte[]) null, valueOf(id)).withPartition(partition),
                            (p, offset, error) -> {
                                if (error == null) {
                                    ledger.acked.put(id, Ledger.pack(p, offset));
                                } else {
                                    ledger.fail(error);
                                }
                            });
                }
            }, "crash-load");
            thread.start();
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            thread.join(30_000);
            assertThat(thread.isAlive()).as("load thread stopped").isFalse();
        }
    }

    /** A group member that polls and commits after every non-empty poll, remembering each acknowledged commit. */
    private static final class Auditor implements AutoCloseable {
        final AtomicLong commits = new AtomicLong();
        final AtomicLong consumed = new AtomicLong();
        private final long startNanos = System.nanoTime();
        private final Thread thread;
        private volatile boolean running = true;

        Auditor(String bootstrap, AtomicLongArray committed) {
            thread = new Thread(() -> {
                try (RemoteConsumer c = new RemoteConsumer(client(bootstrap, "auditor"), ConsumerConfig.builder()
                        .groupId(GROUP).clientId("auditor").offsetReset(OffsetReset.EARLIEST).maxPollRecords(2_000).maxPollBytes(256 << 10)
                        .sessionTimeoutMillis(3_000).build())) {
                    c.subscribe(TOPIC);
                    while (running) {
                        List<ConsumerRecord> records = c.poll(Duration.ofMillis(100));
                        consumed.addAndGet(records.size());
                        if (!records.isEmpty()) {
                            c.commitSync();
                            for (TopicPartition tp : c.assignment()) {
                                committed.accumulateAndGet(tp.partition(), c.position(tp), Math::max);
                            }
                            commits.incrementAndGet();
                        }
                    }
                } catch (SluiceException e) {
                    LOG.info("auditor stopped: {}", e.toString()); // the broker was killed under it
                }
            }, "crash-auditor");
            thread.start();
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            thread.join(30_000);
            assertThat(thread.isAlive()).as("auditor thread stopped").isFalse();
            LOG.info("auditor: consumed={} commits={} in {} ms", consumed.get(), commits.get(),
                    (System.nanoTime() - startNanos) / 1_000_000);
        }
    }
}
