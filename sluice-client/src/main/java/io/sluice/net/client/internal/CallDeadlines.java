package io.sluice.net.client.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Enforces the deadline of the calls on {@link BlockingConnection}s without a socket timeout. A socket read with
 * {@code SO_TIMEOUT} costs three system calls in the JDK (a non-blocking {@code read} that finds nothing, a
 * {@code poll} that waits, the {@code read} again); a read with none is one blocking {@code read}, as a plain-socket
 * client's. So a connection reads with no timeout and publishes the deadline of the call in flight, and one daemon
 * thread for the whole JVM ({@value #THREAD_NAME}) closes the socket of a call that passed its deadline, which
 * fails the blocked read or write at once.
 *
 * <p>The thread runs while some connection is watched and ends when the last one closes. It checks every watched
 * connection each pass and parks for a tenth of the shortest timeout among them, between {@value #MIN_TICK_MILLIS}
 * ms and {@value #MAX_TICK_MILLIS} ms: a call fails after its timeout and at most one pass later (with the default
 * 30 s request timeout, one wake-up a second while connections are open).
 */
final class CallDeadlines {
    static final String THREAD_NAME = "sluice-call-deadlines";
    static final long MIN_TICK_MILLIS = 1;
    static final long MAX_TICK_MILLIS = 1_000;
    static final CallDeadlines SHARED = new CallDeadlines();

    private final Set<BlockingConnection> watched = ConcurrentHashMap.newKeySet();
    private final ReentrantLock lock = new ReentrantLock();
    // guarded by lock
    private Thread thread;

    /** Starts watching {@code connection}'s calls (the thread starts if it is not running). */
    void watch(BlockingConnection connection) {
        lock.lock();
        try {
            watched.add(connection);
            if (thread == null) {
                thread = new Thread(this::run, THREAD_NAME);
                thread.setDaemon(true);
                thread.start();
            } else {
                LockSupport.unpark(thread); // its next park is sized for this connection's timeouts too
            }
        } finally {
            lock.unlock();
        }
    }

    /** Stops watching {@code connection}; when it was the last one, the thread wakes and ends. */
    void forget(BlockingConnection connection) {
        if (watched.remove(connection) && watched.isEmpty()) {
            lock.lock();
            try {
                if (thread != null) {
                    LockSupport.unpark(thread);
                }
            } finally {
                lock.unlock();
            }
        }
    }

    private void run() {
        while (true) {
            long now = System.nanoTime();
            long tick = TimeUnit.MILLISECONDS.toNanos(MAX_TICK_MILLIS);
            for (BlockingConnection c : watched) {
                c.expireIfLate(now);
                tick = Math.min(tick, c.shortestTimeoutNanos() / 10);
            }
            lock.lock();
            try {
                if (watched.isEmpty()) {
                    thread = null;
                    return;
                }
            } finally {
                lock.unlock();
            }
            LockSupport.parkNanos(this, Math.max(tick, TimeUnit.MILLISECONDS.toNanos(MIN_TICK_MILLIS)));
        }
    }
}
