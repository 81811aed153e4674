package io.sluice.core;

/** Where a consumer starts when it has no committed offset (or its offset fell out of retention). */
public enum OffsetReset {
    EARLIEST, LATEST, NONE
}
