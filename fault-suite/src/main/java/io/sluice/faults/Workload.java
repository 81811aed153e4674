package io.sluice.faults;

import io.sluice.core.Acks;
import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicPartition;
import io.sluice.net.client.RemoteConsumer;
import io.sluice.net.client.RemoteProducer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The clients of a run, each on its own named thread, recording every operation in the {@link History}:
 * <ul>
 *   <li><b>producers</b> send {@code {"id":N,"p":P}} with a unique, dense id N (acks=journal, no retries) at a steady
 *   rate, at most {@link #MAX_OUTSTANDING} sends unanswered each; each outcome is a {@code send} op, {@code ok} with
 *   partition and offset or {@code fail} with the error;</li>
 *   <li><b>members</b> of the group {@code members} poll, record a {@code consume} op (member, generation, partition,
 *   offset, id) per record, then commit their positions: a {@code commit} op, {@code ok} or {@code fail}, with the
 *   offsets. A member the nemesis pauses stops polling past its session and then carries on where it was (a zombie).
 *   A member whose consumer throws closes it and joins again as a new member.</li>
 * </ul>
 */
public final class Workload implements AutoCloseable {
    /** Unanswered sends per producer: bounds what a producer holds while the broker is away. */
    public static final int MAX_OUTSTANDING = 2_000;

    private final TortureConfig config;
    private final String bootstrap;
    private final History history;
    private final AtomicLong nextId = new AtomicLong();
    private final AtomicLong acked = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final List<Thread> threads = new ArrayList<>();
    private final long[] memberPausedUntil;
    /** ids any member consumed (guarded by itself): the settle phase waits for them */
    private final java.util.BitSet consumed = new java.util.BitSet();
    private volatile boolean producing = true;
    private volatile boolean consuming = true;
    /** Latency samples of a soak (null in a fault run). */
    private final LoadSamples samples;

    public Workload(TortureConfig config, String bootstrap, History history) {
        this(config, bootstrap, history, null);
    }

    /** As {@link #Workload(TortureConfig, String, History)}, recording produce and end-to-end latencies in {@code samples}. */
    public Workload(TortureConfig config, String bootstrap, History history, LoadSamples samples) {
        this.config = config;
        this.bootstrap = bootstrap;
        this.history = history;
        this.samples = samples;
        this.memberPausedUntil = new long[config.members()];
    }

    /** Makes the producers' ids start at {@code first} (ids below it were used before the workload started). */
    public void startIdsAt(long first) {
        nextId.set(first);
    }

    /** Takes the next unique event id (for other producers of the run, such as a soak's HTTP producers). */
    public long nextId() {
        return nextId.getAndIncrement();
    }

    /** Counts an acknowledgement made by another producer of the run. */
    public void acknowledged() {
        acked.incrementAndGet();
    }

    public void start() {
        for (int i = 0; i < config.producers(); i++) {
            int p = i;
            threads.add(started(new Thread(() -> produce(p), "torture-producer-" + i)));
        }
        for (int i = 0; i < config.members(); i++) {
            int m = i;
            threads.add(started(new Thread(() -> consume(m), "torture-member-" + i)));
        }
    }

    private static Thread started(Thread t) {
        t.start();
        return t;
    }

    /** True if some member consumed every id of {@code ids}. */
    public boolean consumedAll(java.util.BitSet ids) {
        java.util.BitSet missing = (java.util.BitSet) ids.clone();
        synchronized (consumed) {
            missing.andNot(consumed);
        }
        return missing.isEmpty();
    }

    public long sent() {
        return nextId.get();
    }

    public long acked() {
        return acked.get();
    }

    public long failed() {
        return failed.get();
    }

    /** Makes member {@code m} stop polling for {@code pause} (then it resumes with the same consumer). */
    public void pauseMember(int m, Duration pause) {
        synchronized (memberPausedUntil) {
            memberPausedUntil[m] = System.nanoTime() + pause.toNanos();
        }
    }

    private long pausedUntil(int m) {
        synchronized (memberPausedUntil) {
            return memberPausedUntil[m];
        }
    }

    private void produce(int p) {
        String proc = "producer-" + p;
        Semaphore outstanding = new Semaphore(MAX_OUTSTANDING);
        ProducerConfig pc = ProducerConfig.builder().acks(Acks.JOURNAL).maxBlockMillis(1_000).build();
        long periodNanos = TimeUnit.SECONDS.toNanos(1) / config.eventsPerSecond();
        try (RemoteProducer producer = new RemoteProducer(bootstrap, pc)) {
            long next = System.nanoTime();
            while (producing) {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait); // pacing of the load, not synchronisation
                }
                next += periodNanos;
                if (!outstanding.tryAcquire(1, TimeUnit.SECONDS)) {
                    continue;
                }
                long id = nextId.getAndIncrement();
                String json = "{\"id\":" + id + ",\"p\":" + p + "}";
                long sentAt = System.nanoTime();
                if (samples != null) {
                    samples.sent(id, sentAt);
                }
                try {
                    producer.send(ProducerRecord.of(Cluster.TOPIC, null, json), (partition, offset, error) -> {
                        outstanding.release();
                        if (error == null) {
                            if (samples != null) {
                                samples.produced(System.nanoTime() - sentAt);
                            }
                            acked.incrementAndGet();
                            history.append(proc, "send", "ok", n -> n.put("id", id).put("partition", partition).put("offset", offset));
                        } else {
                            failed.incrementAndGet();
                            history.append(proc, "send", "fail", n -> n.put("id", id).put("error", error.getClass().getSimpleName()));
                        }
                    });
                } catch (RuntimeException e) {
                    outstanding.release();
                    failed.incrementAndGet();
                    history.append(proc, "send", "fail", n -> n.put("id", id).put("error", e.getClass().getSimpleName()));
                }
            }
            try {
                producer.flush();
            } catch (RuntimeException e) {
                history.append(proc, "flush", "fail", n -> n.put("error", String.valueOf(e)));
            }
            outstanding.tryAcquire(MAX_OUTSTANDING, 60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            history.append(proc, "producer", "fail", n -> n.put("error", String.valueOf(e)));
        }
    }

    private void consume(int m) {
        int incarnation = 0;
        while (consuming) {
            String member = "member-" + m + "." + incarnation++;
            ConsumerConfig cc = ConsumerConfig.builder().groupId("members").clientId(member)
                    .offsetReset(OffsetReset.EARLIEST).maxPollRecords(500).maxPollBytes(256 << 10)
                    .sessionTimeoutMillis(config.sessionTimeoutMillis()).build();
            try (Consumer consumer = new RemoteConsumer(bootstrap, cc)) {
                consumer.subscribe(Cluster.TOPIC);
                history.append("member-" + m, "join", "ok", n -> n.put("member", member));
                while (consuming) {
                    long until = pausedUntil(m);
                    if (until - System.nanoTime() > 0) {
                        history.append("member-" + m, "pause", "start", n -> n.put("member", member));
                        LockSupport.parkNanos(until - System.nanoTime()); // the fault itself: a member that hangs
                        history.append("member-" + m, "pause", "end", n -> n.put("member", member));
                    }
                    List<ConsumerRecord> records = consumer.poll(Duration.ofMillis(200));
                    int generation = Membership.generation(consumer);
                    for (ConsumerRecord r : records) {
                        long id = idOf(r.valueAsString());
                        if (id >= 0) {
                            boolean first;
                            synchronized (consumed) {
                                first = !consumed.get((int) id);
                                consumed.set((int) id);
                            }
                            if (first && samples != null) {
                                samples.consumed(id, System.nanoTime());
                            }
                        }
                        history.append("member-" + m, "consume", "ok", n -> n.put("member", member).put("gen", generation)
                                .put("partition", r.partition()).put("offset", r.offset()).put("id", id));
                    }
                    if (records.isEmpty()) {
                        continue;
                    }
                    Map<Integer, Long> positions = new HashMap<>();
                    for (TopicPartition tp : consumer.assignment()) {
                        positions.put(tp.partition(), consumer.position(tp));
                    }
                    try {
                        consumer.commitSync();
                        history.append("member-" + m, "commit", "ok", n -> {
                            n.put("member", member).put("gen", generation);
                            positions.forEach((k, v) -> n.with("offsets").put(Integer.toString(k), v));
                        });
                    } catch (RuntimeException e) {
                        history.append("member-" + m, "commit", "fail", n -> n.put("member", member).put("gen", generation)
                                .put("error", e.getClass().getSimpleName() + ": " + e.getMessage()));
                    }
                }
            } catch (RuntimeException e) {
                history.append("member-" + m, "consumer", "fail", n -> n.put("member", member)
                        .put("error", e.getClass().getSimpleName() + ": " + e.getMessage()));
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200)); // back off before joining again
            }
        }
    }

    static long idOf(String json) {
        int i = json.indexOf("\"id\":");
        if (i < 0) {
            return -1;
        }
        int s = i + 5;
        int e = s;
        while (e < json.length() && Character.isDigit(json.charAt(e))) {
            e++;
        }
        return e > s ? Long.parseLong(json.substring(s, e)) : -1;
    }

    /** Stops sending; waits until every producer has its answers (or gave up after 60 s). */
    public void stopProducing() {
        producing = false;
        for (Thread t : threads) {
            if (t.getName().startsWith("torture-producer-")) {
                join(t);
            }
        }
    }

    /** Stops the members (each finishes its poll and commit). */
    public void stopConsuming() {
        consuming = false;
        for (Thread t : threads) {
            join(t);
        }
    }

    private static void join(Thread t) {
        try {
            t.join(TimeUnit.SECONDS.toMillis(120));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        stopProducing();
        stopConsuming();
    }
}
