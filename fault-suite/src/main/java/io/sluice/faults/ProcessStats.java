package io.sluice.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One look at a running JVM process from outside: resident memory, threads and open file descriptors from
 * {@code /proc}; heap in use after a full GC ({@code jcmd GC.run}, then {@code GC.heap_info}); and native memory
 * of the category {@code Other} ({@code jcmd VM.native_memory summary}, the process started with
 * {@code -XX:NativeMemoryTracking=summary}), where direct buffers ({@code ByteBuffer.allocateDirect} and Netty's
 * {@code Unsafe.allocateMemory}) are counted. A value that cannot be read is -1.
 */
public record ProcessStats(long rssBytes, long heapAfterGcBytes, long directBytes, int threads, int openFds) {
    private static final Pattern HEAP_USED = Pattern.compile("heap\\s+total \\d+K, used (\\d+)K");
    private static final Pattern OTHER = Pattern.compile("-\\s+Other \\(reserved=\\d+KB, committed=(\\d+)KB\\)");

    public static ProcessStats of(long pid) {
        if (pid <= 0) {
            return new ProcessStats(-1, -1, -1, -1, -1);
        }
        long rss = -1;
        int threads = -1;
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    rss = Long.parseLong(line.substring(6).trim().split("\\s+")[0]) * 1024;
                } else if (line.startsWith("Threads:")) {
                    threads = Integer.parseInt(line.substring(8).trim());
                }
            }
        } catch (IOException | NumberFormatException e) {
            // the process is gone: -1
        }
        int fds = -1;
        try (Stream<Path> s = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            fds = (int) s.count();
        } catch (IOException e) {
            // gone
        }
        jcmd(pid, "GC.run");
        long heap = first(HEAP_USED, jcmd(pid, "GC.heap_info")) * 1024;
        long direct = first(OTHER, jcmd(pid, "VM.native_memory", "summary")) * 1024;
        return new ProcessStats(rss, heap < 0 ? -1 : heap, direct < 0 ? -1 : direct, threads, fds);
    }

    private static long first(Pattern p, String text) {
        Matcher m = p.matcher(text);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    private static String jcmd(long pid, String... command) {
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
}
