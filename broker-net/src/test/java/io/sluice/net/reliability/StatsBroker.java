package io.sluice.net.reliability;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.util.internal.PlatformDependent;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.net.server.BrokerServer;
import io.sluice.net.server.BrokerServerConfig;
import io.sluice.net.server.ServerStats;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Child-process main: a core broker behind a {@link BrokerServer} (what {@code sluice broker} runs, minus HTTP),
 * answering {@code stats} on stdin with its server counters and memory after a full GC, so tests can check that a
 * fault left nothing behind. {@code stop} closes it gracefully.
 *
 * <p>Args: {@code dataDir port maxConnections maxInFlightPerConnection idleTimeoutMillis}.
 */
public final class StatsBroker {
    static final Pattern LISTENING = Pattern.compile("^listening (\\d+)$");
    static final Pattern STATS = Pattern.compile("^stats (.*)$");

    private StatsBroker() {
    }

    public static void main(String[] args) throws Exception {
        Broker broker = Broker.open(BrokerConfig.builder(Path.of(args[0])).build());
        BrokerServer server = BrokerServer.start(broker, BrokerServerConfig.builder()
                .port(Integer.parseInt(args[1]))
                .ioThreads(2)
                .maxConnections(Integer.parseInt(args[2]))
                .maxInFlightPerConnection(Integer.parseInt(args[3]))
                .idleTimeoutMillis(Long.parseLong(args[4]))
                .build());
        System.out.println("listening " + server.port());
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.equals("stats")) {
                System.out.println("stats " + stats(server.stats()));
                System.out.flush();
            } else if (line.equals("stop")) {
                break;
            }
        }
        server.close();
        broker.close();
        System.out.println("stopped");
        System.out.flush();
    }

    private static String stats(ServerStats s) {
        // two full collections: what survives them is what the broker holds, not garbage awaiting collection
        System.gc();
        System.gc();
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        long nettyDirect = PlatformDependent.usedDirectMemory();
        long allocatorDirect = ByteBufAllocator.DEFAULT instanceof ByteBufAllocatorMetricProvider m
                ? m.metric().usedDirectMemory() : -1;
        return "active=" + s.activeConnections() + " accepted=" + s.acceptedConnections()
                + " refused=" + s.refusedConnections() + " requests=" + s.requests()
                + " produced=" + s.producedRecords() + " fetched=" + s.fetchedRecords()
                + " pauses=" + s.backPressurePauses()
                + " heap=" + heap + " nettyDirect=" + nettyDirect + " allocatorDirect=" + allocatorDirect
                + " threads=" + Thread.activeCount();
    }

    /** The parent side: one parsed {@code stats} line. */
    record Snapshot(long active, long accepted, long refused, long requests, long produced, long fetched,
                    long heap, long nettyDirect, long allocatorDirect, long threads, long rssKb) {
        static Snapshot of(BrokerProcess child) throws Exception {
            child.command("stats");
            Matcher m = child.awaitLine(STATS, java.time.Duration.ofSeconds(30));
            java.util.Map<String, Long> f = new java.util.HashMap<>();
            for (String kv : m.group(1).split(" ")) {
                String[] p = kv.split("=");
                f.put(p[0], Long.parseLong(p[1]));
            }
            return new Snapshot(f.get("active"), f.get("accepted"), f.get("refused"), f.get("requests"),
                    f.get("produced"), f.get("fetched"), f.get("heap"), f.get("nettyDirect"),
                    f.get("allocatorDirect"), f.get("threads"), child.rssKb());
        }

        @Override
        public String toString() {
            return "active=" + active + " accepted=" + accepted + " refused=" + refused + " requests=" + requests
                    + " produced=" + produced + " fetched=" + fetched + " heapAfterGc=" + mib(heap)
                    + " nettyDirect=" + mib(nettyDirect) + " allocatorDirect=" + mib(allocatorDirect)
                    + " threads=" + threads + " rss=" + (rssKb / 1024) + "MiB";
        }

        static String mib(long bytes) {
            return bytes < 0 ? "n/a" : String.format(java.util.Locale.ROOT, "%.1fMiB", bytes / 1048576.0);
        }
    }
}
