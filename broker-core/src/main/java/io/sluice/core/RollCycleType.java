package io.sluice.core;

/** How often a partition's journal starts a new file. Retention removes whole files, so this is its granularity. */
public enum RollCycleType {
    FIVE_MINUTELY, TEN_MINUTELY, HALF_HOURLY, HOURLY, DAILY
}
