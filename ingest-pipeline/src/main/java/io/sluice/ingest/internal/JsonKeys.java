package io.sluice.ingest.internal;

import java.util.List;

/**
 * Reads the top-level keys of one JSON object without parsing values: enough to refuse an event that names a
 * column Sluice fills itself. Keys are decoded ({@code \\uXXXX}, {@code \\"} ...), so an escaped spelling of a
 * reserved name is found too. The input has already been checked to start with '{' and end with '}'; malformed
 * JSON beyond that is left for ClickHouse to reject.
 *
 * <p>Runs once per event on the ingest hot path, so it allocates nothing for a key without a backslash (nearly
 * every key): such a key is its own decoding and is compared byte by byte with the names. Only a key holding an
 * escape is decoded into a String.
 */
final class JsonKeys {
    private JsonKeys() {
    }

    /** The first top-level key of {@code json} that is in {@code names}, or null. */
    static String firstTopLevelKeyIn(byte[] json, List<String> names) {
        int depth = 0;
        boolean expectKey = false;
        for (int i = 0; i < json.length; i++) {
            byte c = json[i];
            if (c == '"') {
                int end = stringEnd(json, i);
                if (depth == 1 && expectKey) {
                    String key = matchingName(json, i + 1, end, names);
                    if (key != null) {
                        return key;
                    }
                    expectKey = false;
                }
                i = end;
            } else if (c == '{' || c == '[') {
                depth++;
                expectKey = depth == 1 && c == '{';
            } else if (c == '}' || c == ']') {
                depth--;
            } else if (c == ',' && depth == 1) {
                expectKey = true;
            }
        }
        return null;
    }

    /** The name in {@code names} that the key in {@code b[from, to)} spells, or null. */
    private static String matchingName(byte[] b, int from, int to, List<String> names) {
        for (int i = from; i < to; i++) {
            if (b[i] == '\\') {
                String key = decode(b, from, to);
                return names.contains(key) ? key : null;
            }
        }
        for (String name : names) {
            if (spells(b, from, to, name)) {
                return name;
            }
        }
        return null;
    }

    /** True if the unescaped bytes {@code b[from, to)}, read as decode reads them (one char per byte), are {@code name}. */
    private static boolean spells(byte[] b, int from, int to, String name) {
        if (name.length() != to - from) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            if ((char) (b[from + i] & 0xff) != name.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** Index of the closing quote of the string opening at {@code open} (or the last index if unterminated). */
    private static int stringEnd(byte[] b, int open) {
        for (int i = open + 1; i < b.length; i++) {
            if (b[i] == '\\') {
                i++;
            } else if (b[i] == '"') {
                return i;
            }
        }
        return b.length - 1;
    }

    private static String decode(byte[] b, int from, int to) {
        StringBuilder sb = new StringBuilder(to - from);
        for (int i = from; i < to; i++) {
            char c = (char) (b[i] & 0xff);
            if (c != '\\' || i + 1 >= to) {
                sb.append(c);
                continue;
            }
            char e = (char) b[++i];
            switch (e) {
                case 'u' -> {
                    if (i + 4 < to) {
                        try {
                            sb.append((char) Integer.parseInt(new String(b, i + 1, 4, java.nio.charset.StandardCharsets.US_ASCII), 16));
                        } catch (NumberFormatException ex) {
                            sb.append('?');
                        }
                        i += 4;
                    }
                }
                case 'n' -> sb.append('\n');
                case 't' -> sb.append('\t');
                case 'r' -> sb.append('\r');
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                default -> sb.append(e);
            }
        }
        return sb.toString();
    }
}
