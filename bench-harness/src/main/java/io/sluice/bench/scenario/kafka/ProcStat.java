package io.sluice.bench.scenario.kafka;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * A process's CPU time from Linux's {@code /proc/<pid>/stat}: fields 14 and 15 ({@code utime}, {@code stime}; all
 * the process's threads, finished ones included), in clock ticks of {@code getconf CLK_TCK} (100 when it cannot be
 * run). The broker's CPU per million records in the kafka-peer tables comes from here.
 */
final class ProcStat {
    private static final double TICKS_PER_SECOND = clockTicks();

    private ProcStat() {
    }

    /** True when {@code /proc/<pid>/stat} can be read (Linux). */
    static boolean available(long pid) {
        return Files.isReadable(path(pid));
    }

    /** User + system CPU seconds of process {@code pid} so far. */
    static double cpuSeconds(long pid) throws IOException {
        return cpuTicks(Files.readString(path(pid), StandardCharsets.US_ASCII)) / TICKS_PER_SECOND;
    }

    /**
     * utime + stime of one {@code /proc/<pid>/stat} line. The command name (field 2) is in parentheses and may hold
     * spaces and parentheses itself, so fields are counted from the last ')': field 3 (state) follows it.
     */
    static long cpuTicks(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0) {
            throw new IllegalArgumentException("not a /proc/<pid>/stat line: " + stat);
        }
        String[] f = stat.substring(close + 1).trim().split("\\s+");
        // f[0] is field 3 (state), so field n is f[n - 3]: utime = f[11], stime = f[12]
        if (f.length < 13) {
            throw new IllegalArgumentException("/proc/<pid>/stat line with " + (f.length + 2) + " fields: " + stat);
        }
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }

    private static Path path(long pid) {
        return Paths.get("/proc", Long.toString(pid), "stat");
    }

    private static double clockTicks() {
        try {
            Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
            if (p.waitFor() == 0 && out.matches("\\d+") && Long.parseLong(out) > 0) {
                return Long.parseLong(out);
            }
        } catch (IOException e) {
            // no getconf: Linux's USER_HZ is 100 on every architecture the JDK runs on
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 100;
    }
}
