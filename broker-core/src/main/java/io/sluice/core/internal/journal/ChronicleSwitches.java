package io.sluice.core.internal.journal;

/**
 * The one place that names Chronicle's system properties. Chronicle reads them once, when its classes initialise, so
 * this class refers to no Chronicle type: calling it loads nothing of Chronicle ({@code NoTelemetryTest} checks the
 * order in a JVM started without the flags).
 */
public final class ChronicleSwitches {
    private ChronicleSwitches() {
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
}
