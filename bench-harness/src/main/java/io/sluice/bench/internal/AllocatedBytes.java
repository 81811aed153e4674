package io.sluice.bench.internal;

import java.lang.management.ManagementFactory;

/** Bytes allocated by threads, from {@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes} (HotSpot). */
public final class AllocatedBytes {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private AllocatedBytes() {
    }

    /** Bytes allocated so far by the live threads whose names start with {@code prefix}. */
    public static long byThreadsNamed(String prefix) {
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith(prefix)) {
                sum += THREADS.getThreadAllocatedBytes(t.getId());
            }
        }
        return sum;
    }

    /** Bytes allocated so far by the calling thread. */
    public static long byCurrentThread() {
        return THREADS.getThreadAllocatedBytes(Thread.currentThread().getId());
    }
}
