package io.sluice.core.internal.journal;

import io.sluice.core.EpochClock;
import io.sluice.core.RollCycleType;
import net.openhft.chronicle.core.time.TimeProvider;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.RollCycles;

/** Chronicle Queue settings shared by every journal; the one place that names Chronicle's system properties. */
public final class ChronicleSupport {
    private ChronicleSupport() {
    }

    /**
     * Sluice never sends usage data. The build and launchers pass these as -D flags; setting them here too, before
     * the first Chronicle class loads, covers applications that embed Sluice without those flags.
     */
    public static void disableTelemetry() {
        setIfAbsent("chronicle.analytics.disable", "true");
        setIfAbsent("chronicle.announcer.disable", "true");
        // Sluice checks free space itself before each append (BrokerConfig.minFreeDiskBytes) and refuses writes
        // instead of only warning; Chronicle's own monitor thread would just repeat the warning every poll.
        setIfAbsent("chronicle.disk.monitor.disable", "true");
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
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
