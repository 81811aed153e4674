package io.sluice.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code --log-level LEVEL} and {@code --log-format text|json}, accepted anywhere on any command line. They become
 * the system properties {@code sluice.log.level} and {@code sluice.log.format} that the bundled {@code logback.xml}
 * reads, so they must be applied before the first logger is created (first thing in {@code main}).
 */
final class LogOptions {
    static final Set<String> LEVELS = Set.of("ERROR", "WARN", "INFO", "DEBUG", "TRACE", "OFF");
    static final Set<String> FORMATS = Set.of("text", "json");

    private LogOptions() {
    }

    /** Sets the properties for the log flags found in {@code args}; returns the other arguments, in order. */
    static String[] apply(String[] args) throws UsageException {
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String name = a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
            if (!name.equals("--log-level") && !name.equals("--log-format")) {
                rest.add(a);
                continue;
            }
            String value;
            if (a.contains("=")) {
                value = a.substring(a.indexOf('=') + 1);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                throw new UsageException(name + " needs a value");
            }
            if (name.equals("--log-level")) {
                String level = value.toUpperCase(Locale.ROOT);
                if (!LEVELS.contains(level)) {
                    throw new UsageException("--log-level must be one of error, warn, info, debug, trace, off; got '" + value + "'");
                }
                System.setProperty("sluice.log.level", level);
            } else {
                String format = value.toLowerCase(Locale.ROOT);
                if (!FORMATS.contains(format)) {
                    throw new UsageException("--log-format must be text or json, got '" + value + "'");
                }
                System.setProperty("sluice.log.format", format);
            }
        }
        return rest.toArray(String[]::new);
    }
}
