package io.sluice.core.internal.bus;

import com.lmax.disruptor.AlertException;
import com.lmax.disruptor.Sequence;
import com.lmax.disruptor.SequenceBarrier;
import com.lmax.disruptor.WaitStrategy;

import java.util.concurrent.locks.LockSupport;

/**
 * Spin, then yield, then park with exponential backoff (Agrona's {@code BackoffIdleStrategy} shape): microsecond
 * wake-ups while events keep coming, and about a thousand wake-ups a second per idle thread once it has been
 * idle for a millisecond. Producers never signal, so publishing stays lock-free.
 */
final class BackoffWaitStrategy implements WaitStrategy {
    private static final int SPINS = 100;
    private static final int YIELDS = 20;
    private static final long MIN_PARK_NANOS = 1_000;
    private static final long MAX_PARK_NANOS = 1_000_000;

    @Override
    public long waitFor(long sequence, Sequence cursor, Sequence dependentSequence, SequenceBarrier barrier)
            throws AlertException {
        long available;
        int idle = 0;
        long park = MIN_PARK_NANOS;
        while ((available = dependentSequence.get()) < sequence) {
            barrier.checkAlert();
            if (idle < SPINS) {
                idle++;
                Thread.onSpinWait();
            } else if (idle < SPINS + YIELDS) {
                idle++;
                Thread.yield();
            } else {
                LockSupport.parkNanos(park);
                park = Math.min(park << 1, MAX_PARK_NANOS);
            }
        }
        return available;
    }

    @Override
    public void signalAllWhenBlocking() {
        // nothing blocks on a lock: waiters poll
    }
}
