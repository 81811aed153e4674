package io.sluice.cli;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A command's flags: {@code --name value}, {@code --name=value} or, for switches, {@code --name}. Unknown flags,
 * missing values, stray arguments and malformed numbers are {@link UsageException}s naming the flag.
 */
final class Args {
    private final Map<String, String> values;

    private Args(Map<String, String> values) {
        this.values = values;
    }

    /**
     * @param valued   flags that take a value
     * @param switches flags without a value ({@code --help} is always accepted)
     */
    static Args parse(String[] argv, Set<String> valued, Set<String> switches) throws UsageException {
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < argv.length; i++) {
            String a = argv[i];
            if (!a.startsWith("--") || a.length() == 2) {
                throw new UsageException("unexpected argument '" + a + "'");
            }
            String name = a.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (name.equals("help") || switches.contains(name)) {
                if (value != null) {
                    throw new UsageException("--" + name + " takes no value");
                }
                values.put(name, "true");
            } else if (valued.contains(name)) {
                if (value == null) {
                    if (i + 1 >= argv.length || argv[i + 1].startsWith("--")) {
                        throw new UsageException("--" + name + " needs a value");
                    }
                    value = argv[++i];
                }
                values.put(name, value);
            } else {
                throw new UsageException("unknown flag --" + name);
            }
        }
        return new Args(values);
    }

    boolean has(String name) {
        return values.containsKey(name);
    }

    String get(String name, String fallback) {
        return values.getOrDefault(name, fallback);
    }

    String required(String name) throws UsageException {
        String v = values.get(name);
        if (v == null) {
            throw new UsageException("--" + name + " is required");
        }
        return v;
    }

    long getLong(String name, long fallback, long min, long max) throws UsageException {
        String v = values.get(name);
        if (v == null) {
            return fallback;
        }
        long n;
        try {
            n = Long.parseLong(v.replace("_", ""));
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " must be a number, got '" + v + "'");
        }
        if (n < min || n > max) {
            throw new UsageException("--" + name + " must be between " + min + " and " + max + ", got " + n);
        }
        return n;
    }

    int getInt(String name, int fallback, int min, int max) throws UsageException {
        return (int) getLong(name, fallback, min, max);
    }

    static Set<String> set(String... names) {
        return Set.copyOf(List.of(names));
    }
}
