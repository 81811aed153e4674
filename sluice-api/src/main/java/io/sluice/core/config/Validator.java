package io.sluice.core.config;

import io.sluice.core.SluiceException.InvalidConfigException;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;

/**
 * Checks one setting's parsed value. {@link #toString()} is the requirement as the docs tables and error messages
 * show it ("between 1 and 64", "one of sync, async").
 */
public interface Validator {
    /** @throws InvalidConfigException naming {@code setting}, the value and the requirement */
    void ensureValid(String setting, Object value);

    /** Numbers in [min, max] (ints or longs). */
    static Validator between(long min, long max) {
        return of(v -> ((Number) v).longValue() >= min && ((Number) v).longValue() <= max,
                "between " + min + " and " + max, "[" + min + ", " + max + "]");
    }

    /** 0 (off), or numbers in [min, max]. */
    static Validator zeroOrBetween(long min, long max) {
        return of(v -> ((Number) v).longValue() == 0 || ((Number) v).longValue() >= min && ((Number) v).longValue() <= max,
                "0 or between " + min + " and " + max, "0, or [" + min + ", " + max + "]");
    }

    /** Numbers ≥ min. */
    static Validator atLeast(long min) {
        return of(v -> ((Number) v).longValue() >= min, ">= " + min, "≥ " + min);
    }

    /** Powers of two in [min, max]. */
    static Validator powerOfTwo(int min, int max) {
        return of(v -> {
            long n = ((Number) v).longValue();
            return n >= min && n <= max && Long.bitCount(n) == 1;
        }, "a power of two between " + min + " and " + max, "power of two in [" + min + ", " + max + "]");
    }

    /** Strings equal, ignoring case, to one of {@code names}. */
    static Validator oneOf(String... names) {
        List<String> allowed = Arrays.asList(names);
        return of(v -> allowed.stream().anyMatch(a -> a.equalsIgnoreCase(v.toString().strip())),
                "one of " + String.join(", ", allowed), String.join(", ", allowed));
    }

    /** Enum constant names, written lower-case in files and ignoring case when read. */
    static <E extends Enum<E>> Validator oneOf(Class<E> type) {
        return oneOf(Arrays.stream(type.getEnumConstants()).map(e -> e.name().toLowerCase(Locale.ROOT)).toArray(String[]::new));
    }

    /** Strings that are not blank. */
    static Validator nonBlank() {
        return of(v -> !v.toString().isBlank(), "must not be blank", "non-blank");
    }

    /**
     * @param requirement as messages read it after "must be " (a leading "must" is kept as is)
     * @param shown       as the docs tables show it
     */
    static Validator of(Predicate<Object> test, String requirement, String shown) {
        String must = requirement.startsWith("must") ? requirement : "must be " + requirement;
        return new Validator() {
            @Override
            public void ensureValid(String setting, Object value) {
                if (!test.test(value)) {
                    throw InvalidConfigException.of(setting, value, must);
                }
            }

            @Override
            public String toString() {
                return shown;
            }
        };
    }
}
