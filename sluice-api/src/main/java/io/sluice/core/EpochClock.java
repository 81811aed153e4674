package io.sluice.core;

/** Wall-clock time in epoch milliseconds; injected so that roll-cycle and retention tests never sleep. */
@FunctionalInterface
public interface EpochClock {
    EpochClock SYSTEM = System::currentTimeMillis;

    long epochMillis();
}
