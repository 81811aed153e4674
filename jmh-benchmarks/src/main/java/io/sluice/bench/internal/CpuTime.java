package io.sluice.bench.internal;

import java.lang.management.ManagementFactory;
import java.time.Duration;

/**
 * CPU time (user + system) of this JVM and of other processes, for the benchmarks' "CPU (user + sys), s per M events"
 * rows. This JVM's figure is {@link com.sun.management.OperatingSystemMXBean#getProcessCpuTime()}: every thread of the
 * process (threads that ended included), which this JDK on Linux keeps in clock ticks ({@link #RESOLUTION_SECONDS});
 * another process's is its {@code /proc/<pid>/stat} utime + stime (through {@link ProcessHandle.Info#totalCpuDuration()},
 * clock ticks too), that process only, not its children. A difference of two reads is therefore exact to about one
 * tick: report it over runs long enough for that not to matter, or say the resolution. Each read either returns a figure or throws
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
