package io.sluice.core.internal.journal;

import io.sluice.core.EpochClock;
import io.sluice.core.RollCycleType;
import net.openhft.chronicle.core.time.TimeProvider;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.RollCycles;

/** Chronicle Queue settings shared by every journal (the system properties are in {@link ChronicleSwitches}). */
public final class ChronicleSupport {
    private ChronicleSupport() {
    }

    static RollCycle rollCycle(RollCycleType type) {
        return switch (type) {
            case FIVE_MINUTELY -> RollCycles.FIVE_MINUTELY;
            case TEN_MINUTELY -> RollCycles.TEN_MINUTELY;
            case HALF_HOURLY -> RollCycles.HALF_HOURLY;
            case HOURLY -> RollCycles.FAST_HOURLY;
            case DAILY -> RollCycles.FAST_DAILY;
        };
    }

    static TimeProvider timeProvider(EpochClock clock) {
        if (clock == EpochClock.SYSTEM) {
            return net.openhft.chronicle.core.time.SystemTimeProvider.INSTANCE;
        }
        return clock::epochMillis;
    }
}
