package io.sluice.core.config;

import io.sluice.core.SluiceException.InvalidConfigException;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Every setting of a component defined once, as Kafka's {@code ConfigDef} does: its key, type, default, validator,
 * importance and prose. The properties file, command-line flags and {@code SLUICE_*} environment variables all resolve
 * through these definitions ({@link #parse(Map)}); {@code docs/} tables of settings are generated from them
 * ({@link #toMarkdownTable(String)}); the components' builders take their defaults from them ({@link #defaultValue}).
 *
 * <p>An unknown key is an error that names the nearest known key (Damerau–Levenshtein distance), so a misspelt
 * setting is never silently ignored. Numbers accept {@code _} as a digit separator ({@code 16_384}).
 *
 * <p>Built once (typically into a {@code static final} field) and read-only afterwards: safe to share between threads.
 */
public final class ConfigDef {
    /** How a value is parsed from its text form. */
    public enum Type {
        STRING, INT, LONG, BOOLEAN,
        /** a string that is never printed (tokens, passwords) */
        PASSWORD;

        String displayName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** How much an operator should care (Kafka's high/medium/low); orders nothing, shown in the docs tables. */
    public enum Importance { HIGH, MEDIUM, LOW }

    /** Marks a setting without a default: parse() leaves it unset (components say whether they need it). */
    public static final Object NO_DEFAULT = new Object() {
        @Override
        public String toString() {
            return "—";
        }
    };

    /** A default computed when it is needed (for example the number of processors), documented by its prose. */
    public record Computed(String description, Supplier<?> supplier) {
        public Computed {
            Objects.requireNonNull(description, "description");
            Objects.requireNonNull(supplier, "supplier");
        }
    }

    /** A setting's definition. */
    public record Key(String name, Type type, Object defaultValue, Validator validator, Importance importance,
                      String documentation) {
        public Key {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(type, "type");
            Objects.requireNonNull(importance, "importance");
            Objects.requireNonNull(documentation, "documentation");
        }

        public boolean hasDefault() {
            return defaultValue != NO_DEFAULT;
        }

        /** The default as the docs show it. */
        public String defaultText() {
            if (defaultValue == NO_DEFAULT) {
                return "—";
            }
            if (defaultValue instanceof Computed c) {
                return c.description();
            }
            if (defaultValue == null) {
                return "none";
            }
            return String.valueOf(defaultValue);
        }

        /** The environment variable that sets this key: {@code SLUICE_} + the key upper-cased, dots as underscores. */
        public String environmentVariable() {
            return ConfigDef.environmentVariable(name);
        }
    }

    private final Map<String, Key> keys = new LinkedHashMap<>();

    /**
     * @param name          the key as written in a properties file, e.g. {@code ring.size}
     * @param defaultValue  a value of the type, null (optional, no value), a {@link Computed}, or {@link #NO_DEFAULT}
     * @param validator     checks parsed values and the default; null accepts anything of the type
     * @throws IllegalArgumentException if the key is defined twice or its default fails its own validator
     */
    public ConfigDef define(String name, Type type, Object defaultValue, Validator validator, Importance importance,
                            String documentation) {
        if (keys.containsKey(name)) {
            throw new IllegalArgumentException("setting " + name + " is defined twice");
        }
        Object def = defaultValue;
        if (def instanceof Integer i && type == Type.LONG) {
            def = i.longValue();
        }
        Key key = new Key(name, type, def, validator, importance, documentation);
        if (def != NO_DEFAULT && def != null && !(def instanceof Computed) && validator != null) {
            validator.ensureValid(name, def);
        }
        keys.put(name, key);
        return this;
    }

    public ConfigDef define(String name, Type type, Object defaultValue, Importance importance, String documentation) {
        return define(name, type, defaultValue, null, importance, documentation);
    }

    /** Adds every definition of {@code other} (a key defined in both is an error). */
    public ConfigDef defineAll(ConfigDef other) {
        for (Key k : other.keys.values()) {
            define(k.name(), k.type(), k.defaultValue(), k.validator(), k.importance(), k.documentation());
        }
        return this;
    }

    /** The definitions in the order they were defined. */
    public Map<String, Key> keys() {
        return Collections.unmodifiableMap(keys);
    }

    public Key key(String name) {
        Key k = keys.get(name);
        if (k == null) {
            throw new IllegalArgumentException("no setting " + name + " is defined");
        }
        return k;
    }

    /** The default of a setting (computed ones are computed now); null for settings without one. */
    public Object defaultValue(String name) {
        Key k = key(name);
        if (k.defaultValue() instanceof Computed c) {
            return c.supplier().get();
        }
        return k.defaultValue() == NO_DEFAULT ? null : k.defaultValue();
    }

    public int defaultInt(String name) {
        return (Integer) defaultValue(name);
    }

    public long defaultLong(String name) {
        return (Long) defaultValue(name);
    }

    public String defaultString(String name) {
        return (String) defaultValue(name);
    }

    /**
     * Checks a value given through a builder against the setting's validator, naming the setting as the caller
     * spells it (an embedder's builder method or the property key).
     *
     * @throws InvalidConfigException naming {@code settingName}, the value and the requirement
     */
    public void check(String name, String settingName, Object value) {
        Validator v = key(name).validator();
        if (v != null) {
            v.ensureValid(settingName, value);
        }
    }

    /**
     * Parses and validates {@code properties} (keys without prefix). Every key must be defined.
     *
     * @throws InvalidConfigException for an unknown key (naming the nearest known one), a value that does not parse
     *                                as its type, or one its validator rejects
     */
    public Values parse(Map<String, String> properties) {
        return parse(properties, "");
    }

    /**
     * As {@link #parse(Map)} for keys written with a prefix (for example {@code ingest.orders.}); messages name
     * the full key. Keys without the prefix are rejected too: pass only the section.
     */
    public Values parse(Map<String, String> properties, String prefix) {
        Map<String, Object> values = new LinkedHashMap<>();
        Map<String, String> given = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : properties.entrySet()) {
            String full = e.getKey();
            if (!full.startsWith(prefix) || !keys.containsKey(full.substring(prefix.length()))) {
                throw unknown(full, prefix);
            }
            String name = full.substring(prefix.length());
            Key k = keys.get(name);
            Object v = parseValue(k, full, e.getValue());
            if (k.validator() != null && v != null) {
                k.validator().ensureValid(full, v);
            }
            values.put(name, v);
            given.put(name, e.getValue());
        }
        for (Key k : keys.values()) {
            if (!values.containsKey(k.name()) && k.hasDefault()) {
                values.put(k.name(), k.defaultValue() instanceof Computed c ? c.supplier().get() : k.defaultValue());
            }
        }
        return new Values(this, prefix, values, given);
    }

    /** The error for a key that is not defined, naming the nearest defined one if any is close. */
    public InvalidConfigException unknown(String fullKey, String prefix) {
        List<String> known = new ArrayList<>();
        for (String k : keys.keySet()) {
            known.add(prefix + k);
        }
        Optional<String> nearest = nearest(fullKey, known);
        return new InvalidConfigException("'" + fullKey + "' is not a known setting"
                + nearest.map(n -> ": did you mean '" + n + "'?").orElse(" (see docs/configuration.md)"));
    }

    /**
     * Settings given as {@code SLUICE_*} environment variables, as property keys: {@code SLUICE_RING_SIZE=65536}
     * becomes {@code ring.size=65536}. Variables that name no defined setting are not settings and are left alone.
     */
    public Map<String, String> fromEnvironment(Map<String, String> environment) {
        Map<String, String> found = new LinkedHashMap<>();
        for (Key k : keys.values()) {
            String v = environment.get(k.environmentVariable());
            if (v != null) {
                found.put(k.name(), v);
            }
        }
        return found;
    }

    static String environmentVariable(String key) {
        return "SLUICE_" + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    private static Object parseValue(Key k, String fullKey, String text) {
        if (text == null) {
            return null;
        }
        String t = text.strip();
        switch (k.type()) {
            case STRING, PASSWORD:
                return t.isEmpty() ? null : t;
            case BOOLEAN:
                if (t.equalsIgnoreCase("true")) {
                    return Boolean.TRUE;
                }
                if (t.equalsIgnoreCase("false")) {
                    return Boolean.FALSE;
                }
                throw InvalidConfigException.of(fullKey, "'" + text + "'", "must be true or false");
            case INT:
            case LONG:
                if (t.isEmpty()) {
                    throw InvalidConfigException.of(fullKey, "''", "must be an integer");
                }
                long n;
                try {
                    n = Long.parseLong(t.replace("_", ""));
                } catch (NumberFormatException e) {
                    throw InvalidConfigException.of(fullKey, "'" + text + "'", "must be an integer");
                }
                if (k.type() == Type.INT) {
                    if (n < Integer.MIN_VALUE || n > Integer.MAX_VALUE) {
                        throw InvalidConfigException.of(fullKey, "'" + text + "'", "is out of range for an int");
                    }
                    return (int) n;
                }
                return n;
            default:
                throw new IllegalStateException(k.type().toString());
        }
    }

    /**
     * The settings as a Markdown table (key, type, default, valid values, importance, description), in definition
     * order; {@code prefix} is written before each key (for example {@code ingest.<name>.}).
     */
    public String toMarkdownTable(String prefix) {
        StringBuilder b = new StringBuilder();
        b.append("| key | type | default | valid values | importance | description |\n");
        b.append("|---|---|---|---|---|---|\n");
        for (Key k : keys.values()) {
            b.append("| `").append(prefix).append(k.name()).append("` | ").append(k.type().displayName())
                    .append(" | ").append(cell(k.type() == Type.PASSWORD && k.defaultValue() != null
                            && k.defaultValue() != NO_DEFAULT ? "(hidden)" : k.defaultText()))
                    .append(" | ").append(cell(k.validator() == null ? "" : k.validator().toString()))
                    .append(" | ").append(k.importance().name().toLowerCase(Locale.ROOT))
                    .append(" | ").append(cell(k.documentation())).append(" |\n");
        }
        return b.toString();
    }

    private static String cell(String s) {
        return s.replace("|", "\\|").replace("\n", " ");
    }

    /**
     * The candidate closest to {@code key} by Damerau–Levenshtein (optimal string alignment) distance, if it is
     * within a third of the key's length (at least 2 edits): close enough to be a typo.
     */
    public static Optional<String> nearest(String key, Collection<String> candidates) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String c : candidates) {
            int d = distance(key, c);
            if (d < bestDistance) {
                bestDistance = d;
                best = c;
            }
        }
        int limit = Math.max(2, key.length() / 3);
        return best != null && bestDistance <= limit ? Optional.of(best) : Optional.empty();
    }

    /** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions. */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                int v = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    v = Math.min(v, d[i - 2][j - 2] + 1);
                }
                d[i][j] = v;
            }
        }
        return d[a.length()][b.length()];
    }

    /** Parsed, validated settings: typed getters by key (without prefix). */
    public static final class Values {
        private final ConfigDef definition;
        private final String prefix;
        private final Map<String, Object> values;
        private final Map<String, String> given;

        Values(ConfigDef definition, String prefix, Map<String, Object> values, Map<String, String> given) {
            this.definition = definition;
            this.prefix = prefix;
            this.values = values;
            this.given = given;
        }

        /** True if the key was given (not just defaulted). */
        public boolean isSet(String name) {
            definition.key(name);
            return given.containsKey(name);
        }

        /** The value, or null for an optional setting that was not given. */
        public Object get(String name) {
            definition.key(name);
            return values.get(name);
        }

        public int getInt(String name) {
            return (Integer) required(name);
        }

        public long getLong(String name) {
            return (Long) required(name);
        }

        public boolean getBoolean(String name) {
            return (Boolean) required(name);
        }

        /** The string, or null when the setting is optional and was not given. */
        public String getString(String name) {
            return (String) get(name);
        }

        private Object required(String name) {
            Object v = get(name);
            if (v == null) {
                throw InvalidConfigException.of(prefix + name, "nothing", "is required");
            }
            return v;
        }

        /** Never prints a {@link Type#PASSWORD}. */
        @Override
        public String toString() {
            StringBuilder b = new StringBuilder("{");
            for (Map.Entry<String, Object> e : values.entrySet()) {
                if (b.length() > 1) {
                    b.append(", ");
                }
                boolean secret = definition.key(e.getKey()).type() == Type.PASSWORD && e.getValue() != null;
                b.append(prefix).append(e.getKey()).append('=').append(secret ? "(hidden)" : e.getValue());
            }
            return b.append('}').toString();
        }
    }
}
