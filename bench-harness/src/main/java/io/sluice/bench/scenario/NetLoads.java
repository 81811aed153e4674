package io.sluice.bench.scenario;

import io.sluice.bench.baseline.LoopbackEcho;
import io.sluice.bench.internal.Latency;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/** Round-trip loads against the raw loopback echo. */
final class NetLoads {
    private NetLoads() {
    }

    /** {@code clients} connections, each on its own thread doing {@code perClient} synchronous round trips. */
    static Run echo(LoopbackEcho echo, int clients, int perClient, byte[] payload) throws Exception {
        Histogram[] hs = new Histogram[clients];
        List<Thread> threads = new ArrayList<>();
        List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        CountDownLatch ready = new CountDownLatch(clients);
        CountDownLatch go = new CountDownLatch(1);
        for (int c = 0; c < clients; c++) {
            Histogram h = Latency.newHistogram();
            hs[c] = h;
            Thread t = new Thread(() -> {
                try (LoopbackEcho.Client client = echo.connect()) {
                    ready.countDown();
                    go.await();
                    for (int i = 0; i < perClient; i++) {
                        long t0 = System.nanoTime();
                        client.roundTrip(payload);
                        Latency.record(h, System.nanoTime() - t0);
                    }
                } catch (Exception e) {
                    errors.add(e);
                    ready.countDown();
                }
            }, "echo-client-" + c);
            threads.add(t);
            t.start();
        }
        ready.await();
        long start = System.nanoTime();
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        long nanos = System.nanoTime() - start;
        if (!errors.isEmpty()) {
            throw new IllegalStateException("echo client failed", errors.get(0));
        }
        return new Run((long) clients * perClient, nanos, Latency.merge(hs));
    }

    /**
     * The fetch baseline: {@code fetches} round trips on one connection, each a {@code requestBytes} request answered
     * with {@code replyBytes} (the payload bytes of one fetch: what any fetch of that size must move).
     */
    static Run fetchEcho(LoopbackEcho echo, int fetches, int requestBytes, int replyBytes) throws Exception {
        Histogram h = Latency.newHistogram();
        byte[] request = new byte[requestBytes];
        try (LoopbackEcho.Client client = echo.connect()) {
            long start = System.nanoTime();
            for (int i = 0; i < fetches; i++) {
                long t0 = System.nanoTime();
                client.fetch(request, replyBytes);
                Latency.record(h, System.nanoTime() - t0);
            }
            return new Run(fetches, System.nanoTime() - start, h);
        }
    }
}
