package io.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.TimeUnit;

/**
 * POSIX signals to a process by id ({@code kill -SIG pid}): Java can send only SIGTERM and SIGKILL itself, fault tests
 * also need SIGSTOP/SIGCONT (a process that hangs: sockets open, nothing answered).
 */
public final class Signals {
    private Signals() {
    }

    /** Sends {@code signal} ("STOP", "CONT", "KILL", ...) to {@code pid}; false if the process no longer exists. */
    public static boolean send(long pid, String signal) {
        try {
            Process p = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("kill -" + signal + " " + pid + " did not return within 10 s");
            }
            return p.exitValue() == 0;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run kill -" + signal + " " + pid, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted sending " + signal + " to " + pid, e);
        }
    }

    /** Resident set size of {@code pid} in bytes, from {@code /proc/<pid>/status} (VmRSS); -1 if unavailable. */
    public static long residentBytes(long pid) {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    String kb = line.substring(6).trim().split("\\s+")[0];
                    return Long.parseLong(kb) * 1024;
                }
            }
            return -1;
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }
}
