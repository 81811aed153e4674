package io.sluice.faults;

import io.sluice.testkit.FaultProxy;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Injects faults at seeded times, one at a time, on its own thread ({@code torture-nemesis}): wait a seeded gap
 * (1–4 s), choose the next fault kind, hold it for a seeded duration (1–6 s; a paused member stays away past its
 * session), heal it, repeat. The first kinds are every kind the run allows, each once in a seeded order (so even a
 * short run injects every kind, whatever its duration); after them, seeded random kinds until the run's duration
 * is over. Each fault is a
 * {@code fault} op with {@code start} and {@code end} in the {@link History}; healing failures are recorded, not
 * thrown, so one bad restart does not end the run.
 */
public final class Nemesis implements AutoCloseable {
    private final TortureConfig config;
    private final Cluster cluster;
    private final Workload workload;
    private final KafkaWorkload kafka;
    private final History history;
    private final Random random;
    private final List<FaultKind> kinds = new ArrayList<>();
    private final Map<FaultKind, Integer> injected = new EnumMap<>(FaultKind.class);
    private final CountDownLatch stop = new CountDownLatch(1);
    private Thread thread;

    public Nemesis(TortureConfig config, Cluster cluster, Workload workload, History history) {
        this(config, cluster, workload, null, history);
    }

    /** As above, with the run's Kafka clients ({@code kafka} null when it has none). */
    public Nemesis(TortureConfig config, Cluster cluster, Workload workload, KafkaWorkload kafka, History history) {
        this.config = config;
        this.cluster = cluster;
        this.workload = workload;
        this.kafka = kafka;
        this.history = history;
        this.random = new Random(config.seed());
        for (FaultKind k : FaultKind.values()) {
            if (!config.faults().contains(k)) {
                continue;
            }
            if (k.needsRedis() && cluster.redis() == null || k.needsIngestProcess() && cluster.ingest() == null
                    || k.needsZooKeeper() && cluster.zooKeeper() == null
                    || k == FaultKind.MEMBER_PAUSE && config.members() == 0
                    || k == FaultKind.KAFKA_MEMBER_PAUSE && (kafka == null || config.kafkaMembers() == 0)
                    || k == FaultKind.DISK_FULL && !cluster.onTmpfs()
                    || (k == FaultKind.CLICKHOUSE_KILL || k == FaultKind.CLICKHOUSE_PAUSE) && !cluster.clickHouse().isPrivate()
                    || (k == FaultKind.REDIS_KILL || k == FaultKind.REDIS_PAUSE) && cluster.redis() != null && !cluster.redis().isPrivate()) {
                continue;
            }
            kinds.add(k);
        }
    }

    /** The fault kinds this run can inject (the allowed ones whose component is present). */
    public List<FaultKind> kinds() {
        return List.copyOf(kinds);
    }

    public synchronized Map<FaultKind, Integer> injected() {
        return new EnumMap<>(injected);
    }

    public void start() {
        thread = new Thread(this::run, "torture-nemesis");
        thread.start();
    }

    private void run() {
        long end = System.nanoTime() + config.duration().toNanos();
        // every kind once, in a seeded order, whatever the duration; then seeded random kinds until the duration is over
        List<FaultKind> firstPass = new ArrayList<>(kinds);
        Collections.shuffle(firstPass, random);
        try {
            while (!kinds.isEmpty() && (!firstPass.isEmpty() || System.nanoTime() - end < 0)) {
                if (stop.await(1_000 + random.nextInt(3_000), TimeUnit.MILLISECONDS)) {
                    return;
                }
                FaultKind kind = firstPass.isEmpty() ? kinds.get(random.nextInt(kinds.size())) : firstPass.remove(0);
                long holdMillis = 1_000 + random.nextInt(5_000);
                int target = random.nextInt(Math.max(1, config.members()));
                inject(kind, holdMillis, target);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void inject(FaultKind kind, long holdFor, int target) throws InterruptedException {
        long holdMillis = switch (kind) {
            case MEMBER_PAUSE -> config.sessionTimeoutMillis() + holdFor;
            case KAFKA_MEMBER_PAUSE -> KafkaMember.SESSION_TIMEOUT_MS + holdFor;
            default -> holdFor;
        };
        history.append("nemesis", "fault", "start", n -> n.put("kind", kind.name()).put("hold_ms", holdMillis));
        synchronized (this) {
            injected.merge(kind, 1, Integer::sum);
        }
        Path ballast = cluster.dataDir().resolve("ballast");
        try {
            List<FaultProxy> ch = cluster.clickHouseProxies();
            FaultProxy rp = cluster.redisProxy();
            long late = Math.max(2 * config.insertTimeoutMillis(), 1_500);
            switch (kind) {
                case BROKER_KILL -> cluster.broker().kill();
                case BROKER_PAUSE -> cluster.broker().pause();
                case INGEST_KILL -> cluster.ingest().kill();
                case INGEST_PAUSE -> cluster.ingest().pause();
                case CLICKHOUSE_KILL -> cluster.clickHouse().kill();
                case CLICKHOUSE_PAUSE -> cluster.clickHouse().pause();
                case CLICKHOUSE_LATE_REQUESTS -> ch.forEach(p -> p.onRequest(r -> r.isInsert() ? FaultProxy.Fault.delay(Duration.ofMillis(late)) : FaultProxy.Fault.PASS));
                case CLICKHOUSE_LOST_RESPONSES -> ch.forEach(p -> p.onRequest(r -> r.isInsert() ? FaultProxy.Fault.DROP_RESPONSE : FaultProxy.Fault.PASS));
                case CLICKHOUSE_CUT -> ch.forEach(p -> {
                    p.onRequest(r -> r.isInsert() ? FaultProxy.Fault.CUT : FaultProxy.Fault.PASS);
                    p.cutAll();
                });
                case ZOOKEEPER_KILL -> cluster.zooKeeper().kill();
                case ZOOKEEPER_PAUSE -> cluster.zooKeeper().pause();
                case REDIS_KILL -> cluster.redis().kill();
                case REDIS_PAUSE -> cluster.redis().pause();
                case REDIS_DELAY -> rp.delayAll(Duration.ofMillis(200 + random.nextInt(800)));
                case REDIS_STALL -> rp.stall(true);
                case REDIS_CUT -> rp.cutAll();
                case MEMBER_PAUSE -> workload.pauseMember(target, Duration.ofMillis(holdMillis));
                case KAFKA_MEMBER_PAUSE -> kafka.pauseMember(target % config.kafkaMembers());
                case DISK_FULL -> fill(ballast);
            }
            if (stop.await(holdMillis, TimeUnit.MILLISECONDS)) {
                Thread.currentThread().interrupt();
            }
            if (kind == FaultKind.REDIS_STALL) {
                rp.cutAll(); // the stalled requests' responses never come
            }
            if (kind == FaultKind.DISK_FULL) {
                Files.deleteIfExists(ballast);
            }
        } catch (IOException | RuntimeException e) {
            history.append("nemesis", "fault", "info", n -> n.put("kind", kind.name()).put("error", String.valueOf(e)));
        } finally {
            List<String> restarted;
            try {
                if (kafka != null) {
                    kafka.resumeMembers();
                }
                restarted = cluster.heal();
            } catch (RuntimeException | AssertionError e) {
                // a restart that did not become ready in time (Await's AssertionError on a loaded machine) is recorded
                // and healed again after the next fault: the nemesis carries on rather than ending the run's faults
                history.append("nemesis", "heal", "fail", n -> n.put("kind", kind.name()).put("error", String.valueOf(e)));
                restarted = List.of();
            }
            List<String> r = restarted;
            history.append("nemesis", "fault", "end", n -> {
                n.put("kind", kind.name());
                r.forEach(x -> n.withArray("restarted").add(x));
            });
        }
    }

    /** Fills the broker's tmpfs until 16 MiB are left (below the broker's min.free.disk.bytes of 64 MiB). */
    private static void fill(Path ballast) throws IOException {
        long free = Files.getFileStore(ballast.getParent()).getUsableSpace() - (16L << 20);
        byte[] chunk = new byte[1 << 20];
        try (OutputStream out = Files.newOutputStream(ballast)) {
            for (long written = 0; written + chunk.length <= free; written += chunk.length) {
                out.write(chunk);
            }
        }
    }

    /** Waits until the run's duration is over and the last fault is healed. */
    public void awaitEnd() throws InterruptedException {
        thread.join();
    }

    /** Stops injecting; the fault in progress is healed first. */
    @Override
    public void close() {
        stop.countDown();
        if (thread != null) {
            try {
                thread.join(TimeUnit.MINUTES.toMillis(3));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
