package io.sluice.net.client.internal;

import io.sluice.core.SluiceException;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Bounds the bytes of records a producer holds (queued, batched or awaiting acknowledgement). The fast path is one
 * CAS; the lock is only taken by senders that must wait for room and by releases while someone waits.
 */
public final class BufferMemory {
    private final long capacity;
    private final AtomicLong used = new AtomicLong();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition freed = lock.newCondition();
    private volatile int waiters;

    public BufferMemory(long capacity) {
        this.capacity = capacity;
    }

    public long capacity() {
        return capacity;
    }

    public long used() {
        return used.get();
    }

    public boolean tryAcquire(int bytes) {
        while (true) {
            long u = used.get();
            if (u + bytes > capacity) {
                return false;
            }
            if (used.compareAndSet(u, u + bytes)) {
                return true;
            }
        }
    }

    /** @throws SluiceException.BackPressureException when no room freed up within {@code maxBlockMillis} */
    public void acquire(int bytes, long maxBlockMillis) {
        if (tryAcquire(bytes)) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxBlockMillis);
        lock.lock();
        try {
            waiters++;
            while (!tryAcquire(bytes)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new SluiceException.BackPressureException("producer buffer memory of " + capacity
                            + " bytes stayed full for maxBlockMillis=" + maxBlockMillis);
                }
                freed.awaitNanos(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SluiceException.BackPressureException("interrupted while waiting for producer buffer memory");
        } finally {
            waiters--;
            lock.unlock();
        }
    }

    public void release(int bytes) {
        used.addAndGet(-bytes);
        if (waiters > 0) {
            lock.lock();
            try {
                freed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }
}
