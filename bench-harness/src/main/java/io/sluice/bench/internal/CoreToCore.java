package io.sluice.bench.internal;

import java.util.Arrays;

/**
 * The machine's core-to-core cost, measured: two threads pass a counter back and forth through two cache lines, and
 * the round trip (each line written on one core and read on the other) is the time of two cache-line transfers. Every
 * hand-off between a producer and a consumer on different cores pays such transfers, so this figure bounds the bus
 * and ring rows from below. On the project's 2-vCPU VM it moves between about 160 and 900 ns over the day, as the
 * hypervisor places the two vCPUs (docs/benchmarks.md item 26): the report prints it at each scenario's start and end
 * so a reader can tell which state a row was measured in.
 *
 * <p>On a machine with more idle cores than two, the scheduler may put both threads on one core's hardware threads;
 * the figure is then that pair's cost.
 */
public final class CoreToCore {
    private static final int ROUND_TRIPS = 100_000;
    private static final int RUNS = 5;

    /** One cache line each, padded on both sides, written by one thread only. */
    @SuppressWarnings("unused")
    private static final class Line {
        long p1, p2, p3, p4, p5, p6, p7;
        volatile long value;
        long q1, q2, q3, q4, q5, q6, q7;
    }

    private CoreToCore() {
    }

    /** Median over {@value #RUNS} runs of {@value #ROUND_TRIPS} round trips, in nanoseconds per round trip. */
    public static double roundTripNanos() throws InterruptedException {
        double[] runs = new double[RUNS];
        for (int i = 0; i < RUNS; i++) {
            runs[i] = oneRun();
        }
        Arrays.sort(runs);
        return runs[RUNS / 2];
    }

    private static double oneRun() throws InterruptedException {
        Line ping = new Line();
        Line pong = new Line();
        Thread echo = new Thread(() -> {
            for (long i = 1; i <= ROUND_TRIPS; i++) {
                while (ping.value != i) {
                    Thread.onSpinWait();
                }
                pong.value = i;
            }
        }, "sluice-bench-core-to-core");
        echo.setDaemon(true);
        echo.start();
        long start = System.nanoTime();
        for (long i = 1; i <= ROUND_TRIPS; i++) {
            ping.value = i;
            while (pong.value != i) {
                Thread.onSpinWait();
            }
        }
        long elapsed = System.nanoTime() - start;
        echo.join();
        return (double) elapsed / ROUND_TRIPS;
    }
}
