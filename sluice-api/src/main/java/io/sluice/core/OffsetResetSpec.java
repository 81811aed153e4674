package io.sluice.core;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/**
 * Where {@code sluice groups reset-offsets} moves a group, per partition (Kafka's {@code --reset-offsets} options).
 * Targets are clamped into the partition's retained range {@code [startOffset, endOffset]}.
 *
 * @param kind  what {@code value} means
 * @param value the offset ({@link Kind#TO_OFFSET}), epoch milliseconds ({@link Kind#TO_DATETIME}), or the signed
 *              distance from the committed offset ({@link Kind#SHIFT_BY}); 0 for the others
 */
public record OffsetResetSpec(Kind kind, long value) {

    public enum Kind {
        /** the partition's first retained offset */
        TO_EARLIEST,
        /** the partition's end offset: skip everything not yet consumed */
        TO_LATEST,
        /** an explicit offset */
        TO_OFFSET,
        /** the first offset whose event timestamp is at or after {@code value} (epoch ms) */
        TO_DATETIME,
        /** the committed offset plus {@code value} (negative moves back); from the start offset if none is committed */
        SHIFT_BY
    }

    public OffsetResetSpec {
        if (kind == null) {
            throw SluiceException.InvalidConfigException.of("reset kind", null, "must be given");
        }
        if (kind == Kind.TO_OFFSET && value < 0) {
            throw SluiceException.InvalidConfigException.of("--to-offset", value, "must be >= 0");
        }
    }

    public static OffsetResetSpec toEarliest() {
        return new OffsetResetSpec(Kind.TO_EARLIEST, 0);
    }

    public static OffsetResetSpec toLatest() {
        return new OffsetResetSpec(Kind.TO_LATEST, 0);
    }

    public static OffsetResetSpec toOffset(long offset) {
        return new OffsetResetSpec(Kind.TO_OFFSET, offset);
    }

    public static OffsetResetSpec toDatetime(Instant instant) {
        return new OffsetResetSpec(Kind.TO_DATETIME, instant.toEpochMilli());
    }

    public static OffsetResetSpec shiftBy(long delta) {
        return new OffsetResetSpec(Kind.SHIFT_BY, delta);
    }

    /**
     * Parses an ISO-8601 date-time with an offset ({@code 2026-11-23T18:00:00Z}, {@code 2026-11-23T19:00:00+01:00}).
     *
     * @throws SluiceException.InvalidConfigException naming the value when it is not one
     */
    public static Instant parseDatetime(String text) {
        try {
            return OffsetDateTime.parse(text).toInstant();
        } catch (DateTimeParseException | NullPointerException e) {
            throw SluiceException.InvalidConfigException.of("--to-datetime", text,
                    "must be an ISO-8601 date-time with a zone offset, like 2026-11-23T18:00:00Z");
        }
    }

    /** The wire and HTTP name: {@code to-earliest}, {@code to-latest}, {@code to-offset}, {@code to-datetime}, {@code shift-by}. */
    public String kindName() {
        return kind.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }

    /** @throws SluiceException.InvalidConfigException for an unknown name */
    public static Kind kindOf(String name) {
        for (Kind k : Kind.values()) {
            if (k.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-').equals(name)) {
                return k;
            }
        }
        throw SluiceException.InvalidConfigException.of("reset kind", name,
                "must be one of to-earliest, to-latest, to-offset, to-datetime, shift-by");
    }
}
