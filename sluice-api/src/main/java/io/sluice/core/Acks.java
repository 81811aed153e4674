package io.sluice.core;

/**
 * When a send is acknowledged, chosen per producer. Each level implies the ones before it.
 */
public enum Acks {
    /** Acknowledged once the event is on the partition ring. Lost if the process dies before the journal writes it. Offset is reported as -1. */
    MEMORY,
    /** Acknowledged once the journal writer appended it to the memory-mapped journal: survives a process crash (SIGKILL). The default. */
    JOURNAL,
    /** Acknowledged once the journal was synced to disk (msync, group commit at the end of each batch): survives an OS crash or power loss. */
    SYNC;

    /** Parses a case-insensitive name, also accepting the Kafka-style aliases {@code 0}, {@code 1} and {@code all}. */
    public static Acks parse(String text) {
        switch (text.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "memory": case "0": return MEMORY;
            case "journal": case "1": return JOURNAL;
            case "sync": case "all": case "-1": return SYNC;
            default: throw new IllegalArgumentException("acks must be one of memory|journal|sync (or 0|1|all), got '" + text + "'");
        }
    }
}
