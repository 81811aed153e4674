package io.sluice.core.internal.journal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Wakes the readers waiting for a partition's journal to grow, instead of letting them poll on a timer. The
 * journal writer calls {@link #signal()} after each batch it appended (its {@code endOffset} already moved);
 * waiters are threads (embedded consumers: {@link #register}, park, {@link #unregister}) or one-shot callbacks
 * (long-polling network fetches: {@link #onNextSignal}).
 *
 * <p>No lost wake-up: a waiter registers (a full fence through {@code waiting}) and then re-reads the end offset
 * before parking or giving up; the writer moves the end offset (a volatile write) and then reads {@code waiting}.
 * With nobody waiting, {@link #signal()} is one volatile read. Thread-safe.
 */
public final class JournalProgress {
    private final AtomicInteger waiting = new AtomicInteger();
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private final Set<Runnable> callbacks = ConcurrentHashMap.newKeySet();

    /** Called by the journal writer after it appended (and published) a batch. */
    public void signal() {
        if (waiting.get() == 0) {
            return;
        }
        for (Thread t : threads) {
            LockSupport.unpark(t);
        }
        for (Runnable r : callbacks) {
            if (callbacks.remove(r)) {
                waiting.decrementAndGet();
                r.run();
            }
        }
    }

    /** The calling thread will be unparked by the next signal until it {@link #unregister}s. Re-check, then park. */
    public void register(Thread thread) {
        if (threads.add(thread)) {
            waiting.incrementAndGet();
        }
    }

    public void unregister(Thread thread) {
        if (threads.remove(thread)) {
            waiting.decrementAndGet();
        }
    }

    /**
     * Runs {@code callback} once, on the journal writer's thread, at the next signal (it must be cheap and never
     * block: hand the work to the caller's own thread). Re-check after registering. {@link #cancel} removes it.
     */
    public void onNextSignal(Runnable callback) {
        if (callbacks.add(callback)) {
            waiting.incrementAndGet();
        }
    }

    public void cancel(Runnable callback) {
        if (callbacks.remove(callback)) {
            waiting.decrementAndGet();
        }
    }

    /** Waiters registered now (threads and callbacks), for tests and metrics. */
    public int waiting() {
        return waiting.get();
    }
}
