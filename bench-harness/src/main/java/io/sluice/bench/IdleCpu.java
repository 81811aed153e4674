package io.sluice.bench;

import io.sluice.bench.internal.TempDir;
import io.sluice.bench.internal.ThreadUsage;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.OffsetReset;
import io.sluice.core.Subscription;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.net.client.ClientConfig;
import io.sluice.net.client.RemoteConsumer;
import io.sluice.net.server.BrokerServer;
import io.sluice.net.server.BrokerServerConfig;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What an idle broker costs: a broker with one journaled topic of 16 partitions, a live subscriber on it, an embedded
 * consumer and a network consumer (long-polling fetches through {@link BrokerServer}) both waiting on all 16
 * partitions, and nothing produced. After a settling pause it reads this process's utime + stime from
 * {@code /proc/self/stat} over a window (30 s by default) and prints the share of one core used, then where it went:
 * the busiest thread groups by CPU and by wake-ups ({@link ThreadUsage}). A thread that wakes for nothing shows as
 * wake-ups per second with almost no CPU; each costs a context switch and keeps the core out of deep idle states.
 *
 * <pre>java $(cat bench-harness/target/jvm.options) -cp bench-harness/target/sluice-bench.jar io.sluice.bench.IdleCpu [seconds] [partitions] [settle seconds, 5]</pre>
 */
public final class IdleCpu {
    private IdleCpu() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        int partitions = args.length > 1 ? Integer.parseInt(args[1]) : 16;
        int settleSeconds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        AtomicBoolean running = new AtomicBoolean(true);
        try (TempDir dir = new TempDir(Path.of(System.getProperty("java.io.tmpdir")), "sluice-idle");
             Broker broker = Broker.open(BrokerConfig.builder(dir.resolve("broker")).build())) {
            broker.createTopic(TopicConfig.of("idle", partitions));
            Set<TopicPartition> all = new HashSet<>();
            for (int p = 0; p < partitions; p++) {
                all.add(new TopicPartition("idle", p));
            }
            BrokerServer server = BrokerServer.start(broker, BrokerServerConfig.builder().bindAddress("127.0.0.1").port(0).build());
            try (Subscription ignored = broker.subscribe("idle", "idle-subscriber", (event, endOfBatch) -> { })) {
                Thread embedded = new Thread(() -> {
                    try (Consumer c = broker.newConsumer(ConsumerConfig.builder().clientId("idle-embedded").offsetReset(OffsetReset.LATEST).build())) {
                        c.assign(all);
                        while (running.get()) {
                            c.poll(Duration.ofSeconds(1));
                        }
                    }
                }, "idle-embedded-consumer");
                Thread remote = new Thread(() -> {
                    try (RemoteConsumer c = new RemoteConsumer(ClientConfig.builder("127.0.0.1:" + server.port()).clientId("idle-remote").build(),
                            ConsumerConfig.builder().clientId("idle-remote").offsetReset(OffsetReset.LATEST).build())) {
                        c.assign(all);
                        while (running.get()) {
                            c.poll(Duration.ofSeconds(1));
                        }
                    }
                }, "idle-remote-consumer");
                embedded.start();
                remote.start();
                // settle: JIT, connections, the first long polls (a measurement tool, not a test). The JIT keeps
                // compiling the idle loops for a while: a longer settle shows the steady state without it
                Thread.sleep(settleSeconds * 1_000L);
                long[] before = cpuTicks();
                ThreadUsage threadsBefore = ThreadUsage.snapshot();
                long t0 = System.nanoTime();
                Thread.sleep(seconds * 1_000L);
                long[] after = cpuTicks();
                ThreadUsage threadsAfter = ThreadUsage.snapshot();
                double wall = (System.nanoTime() - t0) / 1e9;
                double tick = 100.0; // USER_HZ: 100 on Linux
                double user = (after[0] - before[0]) / tick;
                double sys = (after[1] - before[1]) / tick;
                System.out.printf("idle broker, %d partitions, subscriber + embedded consumer + network consumer: "
                                + "%.2f s user + %.2f s sys over %.1f s = %.2f%% of one core%n",
                        partitions, user, sys, wall, 100 * (user + sys) / wall);
                ThreadUsage.print(ThreadUsage.between(threadsBefore, threadsAfter), wall, 10);
                running.set(false);
                embedded.join(10_000);
                remote.join(10_000);
            } finally {
                server.close();
            }
        }
    }

    /** utime and stime of this process, in clock ticks (fields 14 and 15 of /proc/self/stat). */
    private static long[] cpuTicks() throws java.io.IOException {
        String stat = Files.readString(Path.of("/proc/self/stat"), StandardCharsets.US_ASCII);
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        // after "pid (comm) ": field 3 (state) is f[0], so field n is f[n - 3]
        return new long[]{Long.parseLong(f[14 - 3]), Long.parseLong(f[15 - 3])};
    }
}
