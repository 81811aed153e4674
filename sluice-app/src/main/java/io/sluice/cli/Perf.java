package io.sluice.cli;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/** The once-a-second progress line of the perf tools (stderr), on a daemon thread. */
final class Perf {
    private Perf() {
    }

    static Thread progress(PrintStream err, String firstLabel, LongAdder first, String secondLabel, LongAdder second,
                           AtomicBoolean done) {
        Thread t = new Thread(() -> {
            long start = System.nanoTime();
            long last = 0;
            long lastNanos = start;
            while (!done.get()) {
                try {
                    Thread.sleep(1_000);
                } catch (InterruptedException e) {
                    return;
                }
                long now = System.nanoTime();
                long value = second.sum();
                err.printf(Locale.ROOT, "[%5.1f s] %s %d, %s %d (%.0f/s)%n", (now - start) / 1e9, firstLabel, first.sum(),
                        secondLabel, value, (value - last) * 1e9 / (now - lastNanos));
                last = value;
                lastNanos = now;
            }
        }, "sluice-perf-progress");
        t.setDaemon(true);
        t.start();
        return t;
    }
}
