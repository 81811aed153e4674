package io.sluice.bench.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.management.ObjectName;

/**
 * Where this JVM's CPU time and wake-ups go, per thread: a snapshot of {@code /proc/self/task/<tid>/} for each live
 * thread — on-CPU nanoseconds ({@code schedstat}, first field: exact, unlike the 10 ms ticks of {@code stat}) and the
 * voluntary and involuntary context switches ({@code status}). A thread that blocks (park, epoll, futex, sleep) and is
 * woken again counts one voluntary switch, so the difference of two snapshots counts its wake-ups.
 *
 * <p>{@link #between} groups the differences by thread name with its trailing number dropped
 * ({@code sluice-journal-idle-3} and {@code GC Thread#1} join {@code sluice-journal-idle} and {@code GC Thread}), the
 * Java name found from the native thread id in the JVM's own thread dump (the kernel keeps only 15 characters).
 * Threads that ended between the two snapshots are missed; threads born between them count from zero.
 */
public final class ThreadUsage {
    /** one thread's counters at one time */
    private record Task(String kernelName, long cpuNanos, long voluntary, long involuntary) {
    }

    /** a group of threads with the same name but for a trailing number, over the window */
    public record Group(String name, int threads, long cpuNanos, long voluntary, long involuntary) {
    }

    private final Map<Long, Task> tasks;

    private ThreadUsage(Map<Long, Task> tasks) {
        this.tasks = tasks;
    }

    /** The counters of every live thread of this JVM now. */
    public static ThreadUsage snapshot() {
        Map<Long, Task> out = new HashMap<>();
        try (Stream<Path> list = Files.list(Path.of("/proc/self/task"))) {
            for (Path dir : (Iterable<Path>) list::iterator) {
                try {
                    String status = Files.readString(dir.resolve("status"), StandardCharsets.US_ASCII);
                    String schedstat = Files.readString(dir.resolve("schedstat"), StandardCharsets.US_ASCII).strip();
                    int sp = schedstat.indexOf(' ');
                    out.put(Long.parseLong(dir.getFileName().toString()), new Task(field(status, "Name"),
                            Long.parseLong(sp < 0 ? schedstat : schedstat.substring(0, sp)),
                            Long.parseLong(field(status, "voluntary_ctxt_switches")),
                            Long.parseLong(field(status, "nonvoluntary_ctxt_switches"))));
                } catch (IOException gone) {
                    // the thread ended between the listing and the read
                }
            }
        } catch (IOException | UncheckedIOException e) {
            throw new IllegalStateException("cannot read this JVM's threads in /proc/self/task: " + e, e);
        }
        return new ThreadUsage(out);
    }

    private static String field(String status, String key) {
        for (String line : status.split("\n")) {
            if (line.startsWith(key + ":")) {
                return line.substring(key.length() + 1).strip();
            }
        }
        throw new IllegalStateException("no " + key + " in /proc/self/task/*/status");
    }

    /** Differences from {@code before} to {@code after}, grouped by thread name, busiest first. */
    public static List<Group> between(ThreadUsage before, ThreadUsage after) {
        Map<Long, String> javaNames = javaThreadNames();
        Map<String, long[]> sums = new HashMap<>();
        after.tasks.forEach((tid, a) -> {
            Task b = before.tasks.get(tid);
            boolean same = b != null && b.kernelName.equals(a.kernelName);
            String name = groupName(javaNames.getOrDefault(tid, a.kernelName));
            long[] s = sums.computeIfAbsent(name, k -> new long[4]);
            s[0]++;
            s[1] += a.cpuNanos - (same ? b.cpuNanos : 0);
            s[2] += a.voluntary - (same ? b.voluntary : 0);
            s[3] += a.involuntary - (same ? b.involuntary : 0);
        });
        List<Group> out = new ArrayList<>();
        sums.forEach((name, s) -> out.add(new Group(name, (int) s[0], s[1], s[2], s[3])));
        out.sort(Comparator.comparingLong(Group::cpuNanos).reversed());
        return out;
    }

    private static final Pattern TRAILING_NUMBER = Pattern.compile("[-#_ ]?\\d+$");

    static String groupName(String threadName) {
        String n = threadName;
        for (Matcher m = TRAILING_NUMBER.matcher(n); m.find() && m.start() > 0; m = TRAILING_NUMBER.matcher(n)) {
            n = n.substring(0, m.start());
        }
        return n;
    }

    private static final Pattern DUMP_LINE = Pattern.compile("^\"(.*)\"(?: #\\d+)?.* nid=(0x[0-9a-f]+|\\d+) ", Pattern.MULTILINE);

    /**
     * Native thread id → Java thread name, from the JVM's thread dump (the {@code Thread.print} diagnostic command,
     * in process; it names the JIT compiler and GC threads too). Empty if the dump is unavailable: then the kernel's
     * 15-character names are used.
     */
    private static Map<Long, String> javaThreadNames() {
        Map<Long, String> out = new HashMap<>();
        String dump;
        try {
            dump = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "threadPrint",
                    new Object[]{new String[0]}, new String[]{String[].class.getName()});
        } catch (Exception unavailable) {
            return out;
        }
        Matcher m = DUMP_LINE.matcher(dump);
        while (m.find()) {
            String nid = m.group(2);
            out.put(nid.startsWith("0x") ? Long.parseLong(nid.substring(2), 16) : Long.parseLong(nid), m.group(1));
        }
        return out;
    }

    /** Prints the {@code limit} busiest groups by CPU and, separately, by wake-ups, as a share of {@code seconds}. */
    public static void print(List<Group> groups, double seconds, int limit) {
        long cpu = groups.stream().mapToLong(Group::cpuNanos).sum();
        long wakes = groups.stream().mapToLong(Group::voluntary).sum();
        System.out.printf("  all %d threads: %.3f s on CPU (%.2f%% of one core), %.0f wake-ups/s%n",
                groups.stream().mapToInt(Group::threads).sum(), cpu / 1e9, 100 * cpu / 1e9 / seconds, wakes / seconds);
        System.out.printf("  %-34s %7s %9s %7s %10s %10s%n", "by CPU: thread group", "threads", "CPU s", "% core",
                "wakes/s", "preempt/s");
        top(groups, Group::cpuNanos, limit).forEach(g -> row(g, seconds));
        System.out.printf("  %-34s %7s %9s %7s %10s %10s%n", "by wake-ups: thread group", "threads", "CPU s", "% core",
                "wakes/s", "preempt/s");
        top(groups, Group::voluntary, limit).forEach(g -> row(g, seconds));
    }

    private static List<Group> top(List<Group> groups, ToLongFunction<Group> key, int limit) {
        return groups.stream().filter(g -> key.applyAsLong(g) > 0)
                .sorted(Comparator.comparingLong(key).reversed()).limit(limit).toList();
    }

    private static void row(Group g, double seconds) {
        System.out.printf("  %-34s %7d %9.3f %7.3f %10.1f %10.1f%n", g.name().length() > 34 ? g.name().substring(0, 34) : g.name(),
                g.threads(), g.cpuNanos() / 1e9, 100 * g.cpuNanos() / 1e9 / seconds, g.voluntary() / seconds,
                g.involuntary() / seconds);
    }
}
