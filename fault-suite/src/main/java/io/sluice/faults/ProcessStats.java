package io.sluice.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One look at a running JVM process from outside. From {@code /proc}: resident memory and what it is made of
 * ({@code RssAnon} — heap, thread stacks, malloc and direct buffers; {@code RssFile} — mapped files, the journal's
 * Chronicle Queue files among them, and the JVM's own code; {@code RssShmem}), the part of it that is pages of
 * mapped journal files ({@code *.cq4}, {@code *.cq4t}, summed over {@code /proc/<pid>/smaps}), threads and open file
 * descriptors. Heap in use after a full GC ({@code jcmd GC.run}, then {@code GC.heap_info}). From Native Memory
 * Tracking ({@code jcmd VM.native_memory summary}, the process started with {@code -XX:NativeMemoryTracking=summary})
 * the committed totals of the JVM's categories: {@code Other} (where direct buffers, {@code ByteBuffer.allocateDirect}
 * and Netty's {@code Unsafe.allocateMemory}, are counted), the whole, the Java heap, metaspace ({@code Class} +
 * {@code Metaspace}), threads, code and GC. NMT does not see mapped files: the journal is in {@code RssFile}, not in
 * any NMT figure. A value that cannot be read is -1.
 */
public record ProcessStats(long rssBytes, long rssAnonBytes, long rssFileBytes, long rssShmemBytes, long journalMappedBytes,
                           long heapAfterGcBytes, long directBytes, Nmt nmt, int threads, int openFds) {
    private static final Pattern HEAP_USED = Pattern.compile("heap\\s+total \\d+K, used (\\d+)K");
    private static final Pattern NMT_TOTAL = Pattern.compile("Total: reserved=\\d+KB, committed=(\\d+)KB");
    private static final Pattern NMT_CATEGORY = Pattern.compile("-\\s+([A-Za-z][A-Za-z ]*?) \\(reserved=\\d+KB, committed=(\\d+)KB\\)");

    /**
     * Native Memory Tracking committed bytes: the whole, and the categories a soak watches; {@code otherNative} is the
     * whole minus heap, metaspace, threads, code and GC (direct buffers, internal, symbols, compiler arenas, ...).
     */
    public record Nmt(long total, long heap, long metaspace, long threads, long code, long gc, long otherNative) {
        static final Nmt UNKNOWN = new Nmt(-1, -1, -1, -1, -1, -1, -1);

        static Nmt parse(String summary) {
            Matcher t = NMT_TOTAL.matcher(summary);
            if (!t.find()) {
                return UNKNOWN;
            }
            Map<String, Long> committed = categories(summary);
            long total = Long.parseLong(t.group(1)) * 1024;
            long heap = committed.getOrDefault("Java Heap", 0L);
            long meta = committed.getOrDefault("Class", 0L) + committed.getOrDefault("Metaspace", 0L);
            long threads = committed.getOrDefault("Thread", 0L);
            long code = committed.getOrDefault("Code", 0L);
            long gc = committed.getOrDefault("GC", 0L);
            return new Nmt(total, heap, meta, threads, code, gc, total - heap - meta - threads - code - gc);
        }

        static Map<String, Long> categories(String summary) {
            Map<String, Long> committed = new HashMap<>();
            Matcher m = NMT_CATEGORY.matcher(summary);
            while (m.find()) {
                committed.put(m.group(1).trim(), Long.parseLong(m.group(2)) * 1024);
            }
            return committed;
        }
    }

    public static ProcessStats of(long pid) {
        if (pid <= 0) {
            return new ProcessStats(-1, -1, -1, -1, -1, -1, -1, Nmt.UNKNOWN, -1, -1);
        }
        Map<String, Long> status = status(pid);
        int fds = -1;
        try (Stream<Path> s = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            fds = (int) s.count();
        } catch (IOException e) {
            // gone
        }
        long journal = journalMappedBytes(pid);
        jcmd(pid, "GC.run");
        long heap = first(HEAP_USED, jcmd(pid, "GC.heap_info")) * 1024;
        String nmt = jcmd(pid, "VM.native_memory", "summary");
        Long other = Nmt.categories(nmt).get("Other");
        return new ProcessStats(kib(status, "VmRSS"), kib(status, "RssAnon"), kib(status, "RssFile"), kib(status, "RssShmem"),
                journal, heap < 0 ? -1 : heap, other == null ? -1 : other, Nmt.parse(nmt),
                status.getOrDefault("Threads", -1L).intValue(), fds);
    }

    /** Runs {@code jcmd <pid> <command...>} and returns what it printed ("" when it could not run). */
    static String jcmd(long pid, String... command) {
        String[] cmd = new String[command.length + 2];
        cmd[0] = Paths.get(System.getProperty("java.home"), "bin", "jcmd").toString();
        cmd[1] = Long.toString(pid);
        System.arraycopy(command, 0, cmd, 2, command.length);
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            return new String(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    /** The numeric fields of /proc/pid/status, by name (first number of the value; kB for memory). */
    private static Map<String, Long> status(long pid) {
        Map<String, Long> fields = new HashMap<>();
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                int colon = line.indexOf(':');
                if (colon <= 0) {
                    continue;
                }
                String[] value = line.substring(colon + 1).trim().split("\\s+");
                try {
                    fields.put(line.substring(0, colon), Long.parseLong(value[0]));
                } catch (NumberFormatException e) {
                    // not a number (State, Name, masks): not needed
                }
            }
        } catch (IOException e) {
            // the process is gone: nothing
        }
        return fields;
    }

    private static long kib(Map<String, Long> status, String field) {
        Long v = status.get(field);
        return v == null ? -1 : v * 1024;
    }

    /** Resident pages of mappings of Chronicle Queue files ({@code .cq4} cycle files, {@code .cq4t} table store). */
    static long journalMappedBytes(long pid) {
        long kib = 0;
        boolean journal = false;
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "smaps"), StandardCharsets.ISO_8859_1)) {
                if (isMappingHeader(line)) {
                    String path = line.trim().replace(" (deleted)", "");
                    journal = path.endsWith(".cq4") || path.endsWith(".cq4t");
                } else if (journal && line.startsWith("Rss:")) {
                    kib += Long.parseLong(line.substring(4).trim().split("\\s+")[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return kib * 1024;
    }

    /** A mapping's header line in smaps: {@code start-end perms offset dev inode [path]}. */
    private static boolean isMappingHeader(String line) {
        int dash = line.indexOf('-');
        int space = line.indexOf(' ');
        return dash > 0 && space > dash && line.chars().limit(dash).allMatch(c -> Character.digit(c, 16) >= 0);
    }

    private static long first(Pattern p, String text) {
        Matcher m = p.matcher(text);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }
}
