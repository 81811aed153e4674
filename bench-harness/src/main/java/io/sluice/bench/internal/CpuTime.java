package io.sluice.bench.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;

/**
 * CPU time (user + system) of this JVM and of other processes, for the benchmarks' "CPU (user + sys), s per M events"
 * rows. This JVM's figure is {@link com.sun.management.OperatingSystemMXBean#getProcessCpuTime()}: every thread of the
 * process (threads that ended included), which this JDK on Linux keeps in clock ticks ({@link #RESOLUTION_SECONDS});
 * another process's is its {@code /proc/<pid>/stat} utime + stime (through {@link ProcessHandle.Info#totalCpuDuration()},
 * clock ticks too), that process only, not its children. A difference of two such reads is exact to about one tick.
 *
 * <p>For short runs, {@link #mark()} / {@link Mark#seconds()} measure this JVM to the nanosecond: the sum of the
 * on-CPU time of every thread in {@code /proc/self/task/<tid>/schedstat} (GC and JIT threads included), which misses
 * only the threads that ended between the two reads. When the tick figure grew by more than two ticks beyond that
 * sum, threads did end, and the tick figure is returned instead. Each read either returns a figure or throws
 * {@link IllegalStateException} naming what could not be read; it never returns a made-up zero.
 */
public final class CpuTime {
    /** The resolution of the figures read here: one clock tick, 10 ms on Linux (USER_HZ = 100). */
    public static final double RESOLUTION_SECONDS = 0.01;

    private CpuTime() {
    }

    /** User + system CPU seconds this JVM has used so far, all its threads (JIT compiler and GC included). */
    public static double processSeconds() {
        if (!(ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os)) {
            throw new IllegalStateException("this JVM has no com.sun.management.OperatingSystemMXBean: process CPU time unavailable");
        }
        long nanos = os.getProcessCpuTime();
        if (nanos < 0) {
            throw new IllegalStateException("this JVM does not report its process CPU time (getProcessCpuTime() = " + nanos + ")");
        }
        return nanos / 1e9;
    }

    /** User + system CPU seconds process {@code pid} has used so far (its own threads, not its children). */
    public static double processSeconds(long pid) {
        if (pid <= 0) {
            throw new IllegalArgumentException("not a process id: " + pid);
        }
        ProcessHandle h = ProcessHandle.of(pid)
                .orElseThrow(() -> new IllegalStateException("no process " + pid + ": cannot read its CPU time"));
        Duration d = h.info().totalCpuDuration()
                .orElseThrow(() -> new IllegalStateException("the OS does not report the CPU time of process " + pid));
        return d.toNanos() / 1e9;
    }

    /** A point to measure this JVM's CPU time from ({@link #mark()}). */
    public record Mark(double ticks, double threads) {
        /** This JVM's CPU seconds since the mark (see the class comment for which figure). */
        public double seconds() {
            double t = processSeconds() - ticks;
            if (Double.isNaN(threads)) {
                return t;
            }
            double s = threadSeconds() - threads;
            return t - s > 2 * RESOLUTION_SECONDS || Double.isNaN(s) ? t : Math.max(0, s);
        }
    }

    /** The CPU counters of this JVM now. */
    public static Mark mark() {
        return new Mark(processSeconds(), threadSeconds());
    }

    /**
     * Sum of the on-CPU nanoseconds of this JVM's live threads ({@code /proc/self/task/<tid>/schedstat}, first field),
     * in seconds; NaN when the kernel does not provide schedstat or the threads cannot be listed.
     */
    static double threadSeconds() {
        Path tasks = Path.of("/proc/self/task");
        if (!Files.isDirectory(tasks)) {
            return Double.NaN;
        }
        long nanos = 0;
        try (Stream<Path> ts = Files.list(tasks)) {
            for (Path t : (Iterable<Path>) ts::iterator) {
                String line;
                try {
                    line = Files.readString(t.resolve("schedstat"));
                } catch (IOException gone) {
                    // the thread ended while we listed (ENOENT or ESRCH): its time is lost to this sum, and Mark falls
                    // back to the tick figure when that matters
                    continue;
                }
                int sp = line.indexOf(' ');
                nanos += Long.parseLong(sp < 0 ? line.strip() : line.substring(0, sp));
            }
        } catch (IOException | UncheckedIOException e) {
            return Double.NaN; // cannot list the threads now: Mark uses the tick figure
        }
        return nanos / 1e9;
    }

    /** Seconds per million events: {@code seconds × 10⁶ / events}. */
    public static double perMillion(double seconds, long events) {
        if (events <= 0) {
            throw new IllegalArgumentException("CPU per event needs a positive event count, got " + events);
        }
        if (!(seconds >= 0)) {
            throw new IllegalArgumentException("CPU seconds must be ≥ 0, got " + seconds);
        }
        return seconds * 1e6 / events;
    }
}
