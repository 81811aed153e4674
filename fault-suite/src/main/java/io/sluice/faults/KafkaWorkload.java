package io.sluice.faults;

import io.sluice.testkit.Await;
import io.sluice.testkit.ChildJvm;
import io.sluice.testkit.Signals;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The Kafka clients of a run, against the broker's Kafka listener, recording every operation in the {@link History}:
 * <ul>
 *   <li><b>a Kafka producer</b> ({@code kafka-clients}' {@code KafkaProducer} with its defaults: idempotence on,
 *   {@code acks=all}, 5 requests in flight; only its timeouts shortened so that a broker the nemesis killed or
 *   paused is retried within seconds) sends {@code {"id":N}} to the topic {@value #TOPIC} with a unique, dense id N
 *   (its own id space) at the run's rate per producer, at most {@link Workload#MAX_OUTSTANDING} unanswered; each
 *   outcome is a {@code kafka-send} op, {@code ok} with partition and offset or {@code fail} with the error. A
 *   producer whose error is fatal (neither retriable nor a timeout) is closed and a new one (a new producer id)
 *   carries on, recorded as a {@code kafka-producer} op;</li>
 *   <li><b>members</b> of the group {@value #GROUP}: {@link KafkaMember}s, each in its own JVM so that
 *   {@link FaultKind#KAFKA_MEMBER_PAUSE} SIGSTOPs it past its session; what each owned and read becomes
 *   {@code kafka-assign} and {@code kafka-read} ops with generation, member id and partition.</li>
 * </ul>
 * After the run, {@link #readBack} reads the whole topic with a group-less {@code KafkaConsumer}; the {@link Checker}
 * lays it against the acknowledged sends.
 *
 * <p>Thread-safety: one thread per role ({@code torture-kafka-producer}, {@code torture-kafka-member-N} reading a
 * member's stdout); {@link #pauseMember} and {@link #resumeMembers} are the nemesis', serialised on the members list.
 */
public final class KafkaWorkload implements AutoCloseable {
    public static final String TOPIC = "kafka-events";
    public static final String GROUP = "kafka-members";

    private final TortureConfig config;
    private final String bootstrap;
    private final History history;
    private final Path runDir;
    private final AtomicLong nextId = new AtomicLong();
    private final AtomicLong acked = new AtomicLong();
    private final List<Process> members = new ArrayList<>();
    private final boolean[] paused;
    /** per member, whether it has been assigned a partition yet (guarded by itself) */
    private final boolean[] assignedOnce;
    private final List<Thread> readers = new ArrayList<>();
    private Thread producerThread;
    private volatile boolean producing = true;

    public KafkaWorkload(TortureConfig config, String bootstrap, History history) {
        this.config = config;
        this.bootstrap = bootstrap;
        this.history = history;
        this.runDir = config.runDir();
        this.paused = new boolean[config.kafkaMembers()];
        this.assignedOnce = new boolean[config.kafkaMembers()];
    }

    /**
     * Starts the members' JVMs. They may start before the broker: their clients retry the bootstrap address until it
     * answers, so the JVMs' start-up overlaps the broker's.
     */
    public void startMembers() {
        for (int i = 0; i < config.kafkaMembers(); i++) {
            String proc = "kafka-member-" + i;
            Process p;
            try {
                List<String> command = new ArrayList<>(ChildJvm.command("160m", KafkaMember.class, bootstrap, GROUP, TOPIC, proc));
                // a consumer of ~100 records/s needs neither C2 nor a parallel collector: two JVMs that start beside
                // the broker on a 2-core machine take less of its CPU (and of the suite's time) this way
                command.addAll(1, List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
                p = new ProcessBuilder(command)
                        .redirectError(ProcessBuilder.Redirect.appendTo(runDir.resolve(proc + ".log").toFile()))
                        .start();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start " + proc, e);
            }
            synchronized (members) {
                members.add(p);
            }
            int m = i;
            Thread reader = new Thread(() -> record(m, proc, p), "torture-" + proc);
            reader.start();
            readers.add(reader);
        }
    }

    /** Starts the producer (the broker must be up: its first sends would otherwise wait out {@code max.block.ms}). */
    public void startProducer() {
        producerThread = new Thread(this::produce, "torture-kafka-producer");
        producerThread.start();
    }

    /**
     * Waits until every member has been assigned a partition (so the group has formed, and the first
     * {@link FaultKind#KAFKA_MEMBER_PAUSE} finds a member that owns something), at most {@code deadline}.
     *
     * @return whether the group formed in time (the run goes on either way)
     */
    public boolean awaitGroupFormed(Duration deadline) {
        try {
            Await.until("every Kafka member was assigned a partition", deadline, () -> {
                synchronized (assignedOnce) {
                    for (boolean a : assignedOnce) {
                        if (!a) {
                            return false;
                        }
                    }
                    return true;
                }
            });
            return true;
        } catch (AssertionError e) {
            return false;
        }
    }

    public long acked() {
        return acked.get();
    }

    /** SIGSTOP of member {@code m}'s JVM: its poll loop and its heartbeats stop until {@link #resumeMembers()}. */
    public void pauseMember(int m) {
        synchronized (members) {
            Process p = members.get(m);
            if (p.isAlive() && Signals.send(p.pid(), "STOP")) {
                paused[m] = true;
                history.append("kafka-member-" + m, "pause", "start", n -> n.put("pid", p.pid()));
            }
        }
    }

    /** SIGCONT of every paused member. */
    public void resumeMembers() {
        synchronized (members) {
            for (int m = 0; m < paused.length; m++) {
                if (paused[m]) {
                    Process p = members.get(m);
                    Signals.send(p.pid(), "CONT");
                    paused[m] = false;
                    history.append("kafka-member-" + m, "pause", "end", n -> n.put("pid", p.pid()));
                }
            }
        }
    }

    /** Turns a member's stdout lines (see {@link KafkaMember}) into history ops, until the member exits. */
    private void record(int m, String proc, Process p) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String next; (next = in.readLine()) != null; ) {
                String line = next;
                if (!line.startsWith(KafkaMember.PREFIX)) {
                    continue; // the client's logging
                }
                String[] f = line.substring(KafkaMember.PREFIX.length()).split(" ", 7);
                switch (f[0]) {
                    case "assigned" -> {
                        if (f.length > 3 && !f[3].isEmpty()) {
                            synchronized (assignedOnce) {
                                assignedOnce[m] = true;
                            }
                        }
                        history.append(proc, "kafka-assign", "ok", n -> {
                        n.put("gen", Integer.parseInt(f[1])).put("member", f[2]);
                        var parts = n.putArray("partitions");
                        if (f.length > 3 && !f[3].isEmpty()) {
                            for (String s : f[3].split(",")) {
                                parts.add(Integer.parseInt(s));
                            }
                        }
                        });
                    }
                    case "read" -> history.append(proc, "kafka-read", "ok", n -> n.put("gen", Integer.parseInt(f[1]))
                            .put("member", f[2]).put("partition", Integer.parseInt(f[3]))
                            .put("first", Long.parseLong(f[4])).put("last", Long.parseLong(f[5])));
                    case "commit" -> history.append(proc, "kafka-commit", f[1], n -> {
                        n.put("gen", Integer.parseInt(f[2])).put("member", f[3]);
                        if (f.length > 4) {
                            n.put("error", String.join(" ", java.util.Arrays.copyOfRange(f, 4, f.length)));
                        }
                    });
                    case "fail" -> history.append(proc, "kafka-consumer", "fail", n -> n.put("error", line));
                    default -> history.append(proc, "kafka-member", "info", n -> n.put("line", line));
                }
            }
        } catch (IOException | RuntimeException e) {
            history.append(proc, "kafka-member", "info", n -> n.put("error", String.valueOf(e)));
        }
        if (producing) {
            // members run until the workload closes them: an exit before that is worth seeing in the history
            history.append(proc, "kafka-member", "fail", n -> n.put("exit", p.isAlive() ? -1 : p.exitValue()));
        }
    }

    private Properties producerProperties() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", "torture-kafka-producer");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        // otherwise Kafka's defaults (enable.idempotence=true, acks=all, max.in.flight 5, delivery.timeout.ms 120 s):
        // a request the paused broker does not answer times out in 3 s and is retried with its sequence number
        p.put("request.timeout.ms", "3000");
        p.put("retry.backoff.ms", "100");
        p.put("max.block.ms", "10000");
        // acks=all is an fsynced append on the broker (docs/kafka.md): 50 ms of linger makes ~20 produce requests a
        // second of the ~100 records, rather than one per record, so the journal's fsyncs do not slow the whole run
        p.put("linger.ms", "50");
        return p;
    }

    private void produce() {
        String proc = "kafka-producer";
        Semaphore outstanding = new Semaphore(Workload.MAX_OUTSTANDING);
        long periodNanos = TimeUnit.SECONDS.toNanos(1) / config.eventsPerSecond();
        int incarnation = 0;
        try {
            while (producing) {
                int inc = incarnation++;
                java.util.concurrent.atomic.AtomicReference<KafkaException> fatal = new java.util.concurrent.atomic.AtomicReference<>();
                try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties())) {
                    history.append(proc, "kafka-producer", "info", n -> n.put("incarnation", inc));
                    long next = System.nanoTime();
                    while (producing && fatal.get() == null) {
                        long wait = next - System.nanoTime();
                        if (wait > 0) {
                            LockSupport.parkNanos(wait); // pacing of the load, not synchronisation
                        }
                        next += periodNanos;
                        if (!outstanding.tryAcquire(1, TimeUnit.SECONDS)) {
                            continue;
                        }
                        long id = nextId.getAndIncrement();
                        try {
                            producer.send(new ProducerRecord<>(TOPIC, null, "{\"id\":" + id + "}"), (md, error) -> {
                                outstanding.release();
                                if (error == null) {
                                    acked.incrementAndGet();
                                    history.append(proc, "kafka-send", "ok", n -> n.put("id", id)
                                            .put("partition", md.partition()).put("offset", md.offset()));
                                } else {
                                    history.append(proc, "kafka-send", "fail", n -> n.put("id", id)
                                            .put("error", KafkaMember.oneLine(error)));
                                    if (!(error instanceof RetriableException) && error instanceof KafkaException k) {
                                        fatal.compareAndSet(null, k);
                                    }
                                }
                            });
                        } catch (KafkaException e) {
                            outstanding.release();
                            history.append(proc, "kafka-send", "fail", n -> n.put("id", id).put("error", KafkaMember.oneLine(e)));
                        }
                    }
                    try {
                        producer.flush(); // every send answered (acknowledged or failed) before the producer closes
                    } catch (KafkaException e) {
                        history.append(proc, "flush", "fail", n -> n.put("error", KafkaMember.oneLine(e)));
                    }
                }
                KafkaException f = fatal.get();
                if (f != null) {
                    history.append(proc, "kafka-producer", "fail", n -> n.put("incarnation", inc).put("error", KafkaMember.oneLine(f)));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (KafkaException e) {
            history.append(proc, "kafka-producer", "fail", n -> n.put("error", KafkaMember.oneLine(e)));
        }
    }

    /** Stops sending; returns once the producer has every answer and is closed. */
    public void stopProducing() {
        producing = false;
        if (producerThread != null) {
            join(producerThread, 180);
        }
    }

    /** What the topic holds: for each id read, where ({@code partition@offset}) each copy of it was found. */
    public record ReadBack(Map<Long, List<String>> positions, long records, boolean complete) {
    }

    /**
     * Reads {@value #TOPIC} from its start to the end offsets it has now, with a {@code KafkaConsumer} that joins no
     * group; gives up after {@code deadline} (then {@code complete} is false).
     */
    public ReadBack readBack(Duration deadline) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", "torture-kafka-read-back");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        Map<Long, List<String>> positions = new HashMap<>();
        long records = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < config.partitions(); i++) {
                tps.add(new TopicPartition(TOPIC, i));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps, deadline);
            long until = System.nanoTime() + deadline.toNanos();
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                if (System.nanoTime() - until > 0) {
                    return new ReadBack(positions, records, false);
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    records++;
                    positions.computeIfAbsent(Workload.idOf(r.value()), k -> new ArrayList<>(1))
                            .add(r.partition() + "@" + r.offset());
                }
            }
        }
        return new ReadBack(positions, records, true);
    }

    private static void join(Thread t, long seconds) {
        try {
            t.join(TimeUnit.SECONDS.toMillis(seconds));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the producer, then the members' JVMs (resumed first if paused). Safe to call twice. */
    @Override
    public void close() {
        stopProducing();
        resumeMembers();
        synchronized (members) {
            members.forEach(Process::destroy);
        }
        for (Process p : members) {
            try {
                if (!p.waitFor(30, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    p.waitFor(30, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
            }
        }
        readers.forEach(t -> join(t, 10));
    }
}
