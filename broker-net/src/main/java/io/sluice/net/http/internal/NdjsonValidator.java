package io.sluice.net.http.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Validates a whole NDJSON body before any of it is produced, so a rejected request writes nothing.
 * Immutable and thread-safe.
 *
 * <p>The body is split on {@code '\n'}; a trailing {@code '\r'} and surrounding blanks are trimmed from each line.
 * Blank lines are skipped (they are not events; a trailing newline is fine), and line numbers count every
 * physical line from 1. A UTF-8 byte order mark is skipped at the very start of the body and refused anywhere else. Each non-blank line must be:
 * <ul>
 *   <li>strict UTF-8 (RFC 3629: no overlong forms, surrogates or code points above U+10FFFF) — checked here,
 *       byte by byte, because JSON parsers are lenient about overlong forms;</li>
 *   <li>at most {@code maxLineBytes} bytes;</li>
 *   <li>exactly one JSON value (RFC 8259, no comments, NaN or trailing data) nested at most {@code maxDepth} deep,
 *       checked with Jackson's streaming parser without building a tree;</li>
 *   <li>with a key field requested: a JSON object, whose top-level member of that name, if present, is a string,
 *       number or boolean; its text becomes the event key. A missing member or {@code null} means no key.</li>
 * </ul>
 * The event value is the trimmed line, byte for byte as sent.
 */
public final class NdjsonValidator {

    private final int maxLineBytes;
    private final int maxDepth;
    private final JsonFactory json;

    public NdjsonValidator(int maxLineBytes, int maxDepth) {
        this.maxLineBytes = maxLineBytes;
        this.maxDepth = maxDepth;
        // Jackson's own nesting limit is a backstop one level beyond ours, so our message is the one reported.
        this.json = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(maxDepth + 1)
                        .maxStringLength(Math.max(maxLineBytes, 1))
                        .build())
                .build();
    }

    /** The outcome of {@link #validate}: either every event of the body, or the first reason to reject it. */
    public sealed interface Result permits Events, Rejection {
    }

    /**
     * Why a body is rejected.
     *
     * @param line the 1-based line number, or 0 when the reason concerns the whole body
     */
    public record Rejection(int line, String reason) implements Result {
        public String message() {
            return line > 0 ? "line " + line + ": " + reason : reason;
        }
    }

    /** The events of a valid body, as ranges {@code [start, end)} of the body array, in order. */
    public static final class Events implements Result {
        private int count;
        private int[] lines;
        private int[] starts;
        private int[] ends;
        private byte[][] keys;

        Events(int capacity) {
            lines = new int[capacity];
            starts = new int[capacity];
            ends = new int[capacity];
            keys = new byte[capacity][];
        }

        void add(int line, int start, int end, byte[] key) {
            if (count == lines.length) {
                int n = count * 2;
                lines = Arrays.copyOf(lines, n);
                starts = Arrays.copyOf(starts, n);
                ends = Arrays.copyOf(ends, n);
                keys = Arrays.copyOf(keys, n);
            }
            lines[count] = line;
            starts[count] = start;
            ends[count] = end;
            keys[count] = key;
            count++;
        }

        void setKey(int i, byte[] key) {
            keys[i] = key;
        }

        public int count() {
            return count;
        }

        public int line(int i) {
            return lines[i];
        }

        public int start(int i) {
            return starts[i];
        }

        public int end(int i) {
            return ends[i];
        }

        /** The key bytes of event {@code i}, or null. */
        public byte[] key(int i) {
            return keys[i];
        }
    }

    /**
     * Validates {@code body[from, to)}; the first error, by line, wins.
     *
     * @param keyField the top-level member whose value is each event's key, or null for no keys
     */
    public Result validate(byte[] body, int from, int to, String keyField) {
        Events events = new Events(16);
        Rejection lineRejection = splitLines(body, from, to, events);
        if (lineRejection == null && events.count > 0 && scanEvents(body, events, keyField)) {
            return events;
        }
        return parse(body, events, lineRejection, keyField);
    }

    /** {@link #validate} without the fast scan: the reference the fast scan is tested against. */
    Result validateWithParser(byte[] body, int from, int to, String keyField) {
        Events events = new Events(16);
        return parse(body, events, splitLines(body, from, to, events), keyField);
    }

    private Result parse(byte[] body, Events events, Rejection lineRejection, String keyField) {
        if (events.count > 0) {
            Rejection jsonRejection = parseEvents(body, events, keyField);
            if (jsonRejection != null) {
                return jsonRejection; // it is on a line before any line-level rejection
            }
        }
        if (lineRejection != null) {
            return lineRejection;
        }
        if (events.count == 0) {
            return new Rejection(0, "the body has no events (expected one JSON value per line)");
        }
        return events;
    }

    /**
     * Pass 1: finds the non-blank lines (trimmed) and checks their UTF-8 and length, adding each to {@code events}.
     * Stops at the first bad line and returns its rejection; the lines before it are in {@code events}.
     */
    private Rejection splitLines(byte[] body, int from, int to, Events events) {
        int line = 0;
        int pos = from;
        if (startsWithByteOrderMark(body, pos, to)) {
            pos += 3; // some Windows tools write one; it is not part of the first event
        }
        while (pos < to) {
            line++;
            int lineStart = pos;
            int i = pos;
            while (i < to) {
                byte c = body[i];
                if (c >= 0) {
                    if (c == '\n') {
                        break;
                    }
                    i++;
                } else {
                    int n = Utf8.sequenceLength(body, i, to);
                    if (n < 0) {
                        return new Rejection(line, "invalid UTF-8 at byte " + (i - lineStart + 1));
                    }
                    i += n;
                }
            }
            int lineEnd = i;
            pos = i + 1;
            if (lineEnd - lineStart > maxLineBytes) {
                return new Rejection(line, "line is " + (lineEnd - lineStart) + " bytes, more than the limit of "
                        + maxLineBytes + " (http.max.line.bytes)");
            }
            int s = lineStart;
            int e = lineEnd;
            while (s < e && isBlank(body[s])) {
                s++;
            }
            while (e > s && isBlank(body[e - 1])) {
                e--;
            }
            if (s == e) {
                continue;
            }
            if (startsWithByteOrderMark(body, s, e)) {
                // Jackson would skip it as the start of a document; inside a body it is a stray character
                return new Rejection(line, "invalid JSON at column " + (s - lineStart + 1) + ": byte order mark (U+FEFF) inside the body");
            }
            events.add(line, s, e, null);
        }
        return null;
    }

    /**
     * Pass 2: one streaming parser over all the lines found (one per body, not one per line: creating a parser
     * costs more than parsing a 100-byte event). Each line must hold exactly one value, starting at the line's first
     * byte and ending at its last, which also catches a value that runs on into the next line.
     */
    private Rejection parseEvents(byte[] body, Events events, String keyField) {
        int base = events.start(0);
        int limit = events.end(events.count - 1);
        int k = 0;
        try (JsonParser parser = json.createParser(body, base, limit - base)) {
            for (; k < events.count; k++) {
                int line = events.line(k);
                int s = events.start(k);
                int e = events.end(k);
                JsonToken token = parser.nextToken();
                if (token == null || base + parser.currentTokenLocation().getByteOffset() != s) {
                    return new Rejection(line, "invalid JSON: no value where the line starts"); // unreachable for trimmed lines
                }
                if (keyField != null && token != JsonToken.START_OBJECT) {
                    return new Rejection(line, "with ?key=" + keyField + " every event must be a JSON object");
                }
                boolean scalar = !token.isStructStart();
                byte[] key = null;
                boolean keySeen = false;
                int depth = 0;
                while (true) {
                    switch (token) {
                        case START_OBJECT, START_ARRAY -> {
                            if (++depth > maxDepth) {
                                return new Rejection(line, "JSON nested deeper than " + maxDepth + " levels (http.max.json.depth)");
                            }
                        }
                        case END_OBJECT, END_ARRAY -> depth--;
                        case FIELD_NAME -> {
                            if (keyField != null && depth == 1 && !keySeen && keyField.equals(parser.currentName())) {
                                keySeen = true;
                                JsonToken value = parser.nextToken();
                                if (value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY) {
                                    return new Rejection(line, "key field '" + keyField + "' must be a string, number or boolean");
                                }
                                if (value != JsonToken.VALUE_NULL) {
                                    key = parser.getText().getBytes(StandardCharsets.UTF_8);
                                }
                            }
                        }
                        default -> {
                        }
                    }
                    if (depth == 0) {
                        break;
                    }
                    token = parser.nextToken();
                    if (token == null) {
                        return new Rejection(line, "invalid JSON: unexpected end of the body inside a value");
                    }
                }
                if (token == JsonToken.VALUE_STRING) {
                    parser.finishToken(); // strings are read lazily: the end location needs the whole token
                }
                int end = base + (int) parser.currentLocation().getByteOffset();
                // after a root-level number Jackson also consumes the one whitespace byte that ended it
                boolean endsAtLineEnd = end == e || (scalar && end == e + 1 && e < body.length && isBlankOrNewline(body[e]));
                if (!endsAtLineEnd) {
                    return end > e ? new Rejection(line, "invalid JSON: the value is not complete at the end of the line")
                            : new Rejection(line, "unexpected data after the JSON value at column "
                            + (end - lineStartBefore(body, s) + 1) + " (one event per line)");
                }
                events.setKey(k, key);
            }
            return null;
        } catch (StreamConstraintsException ex) {
            return new Rejection(events.line(k), "JSON exceeds a limit: " + ex.getOriginalMessage());
        } catch (JsonProcessingException ex) {
            int line = events.line(k);
            long offset = ex.getLocation() == null ? -1 : ex.getLocation().getByteOffset();
            if (offset >= 0 && base + offset > events.end(k)) {
                return new Rejection(line, "invalid JSON: the value is not complete at the end of the line");
            }
            String column = offset < 0 ? "" : " at column " + (base + offset - lineStartBefore(body, events.start(k)) + 1);
            return new Rejection(line, "invalid JSON" + column + ": " + firstLine(ex.getOriginalMessage()));
        } catch (IOException ex) {
            // Parsing a byte array does no I/O; anything else Jackson throws is still a parse failure.
            return new Rejection(events.line(k), "invalid JSON: " + firstLine(ex.getMessage()));
        }
    }

    /** Longest member name and number the fast scan passes; longer ones go to the parser (Jackson has limits on both). */
    private static final int MAX_SCANNED_TOKEN = 256;
    /** Deepest nesting the fast scan follows (one bit per level); deeper lines go to the parser. */
    private static final int MAX_SCANNED_DEPTH = 63;
    private static final byte[] TRUE = {'t', 'r', 'u', 'e'};
    private static final byte[] FALSE = {'f', 'a', 'l', 's', 'e'};
    private static final byte[] NULL = {'n', 'u', 'l', 'l'};

    /**
     * The fast path of pass 2: a hand-written scan of each line, allocation-free but for the keys, for bodies that are
     * plainly valid (most are, and most are small, where creating a Jackson parser costs more than the parse). It
     * proves a subset of what {@link #parseEvents} accepts, with the same events and keys: RFC 8259 values with
     * ASCII outside strings, depth within {@code maxDepth} and 63, names and numbers of at most 256 bytes and, with
     * a key field, a key member whose name and string value have no escapes. It returns false at the first byte
     * outside that subset, valid or not; the caller then runs the parser over the whole body, which decides and
     * words the rejection exactly as before. Strings were already checked for strict UTF-8 by pass 1.
     *
     * @return true if every line is valid and its key (if any) set in {@code events}
     */
    private boolean scanEvents(byte[] body, Events events, String keyField) {
        byte[] keyName = null;
        if (keyField != null) {
            keyName = keyField.getBytes(StandardCharsets.UTF_8);
            if (!new String(keyName, StandardCharsets.UTF_8).equals(keyField)) {
                return false; // not representable byte for byte: compare decoded names in the parser
            }
        }
        int depthLimit = Math.min(maxDepth, MAX_SCANNED_DEPTH);
        for (int k = 0; k < events.count; k++) {
            int e = events.end(k);
            int i = events.start(k);
            if (keyName != null && body[i] != '{') {
                return false;
            }
            long objects = 0; // bit d set: the container at depth d + 1 is an object
            int depth = 0;
            byte[] key = null;
            boolean keySeen = false;
            boolean value = true; // expecting a value (else: a member name)
            while (true) {
                i = skipBlanks(body, i, e);
                if (i >= e) {
                    return false;
                }
                if (!value) { // a member name, then ':'
                    if (body[i] != '"') {
                        return false;
                    }
                    int nameEnd = scanString(body, i + 1, e);
                    if (nameEnd < 0 || nameEnd - i > MAX_SCANNED_TOKEN) {
                        return false;
                    }
                    boolean isKey = false;
                    if (keyName != null && depth == 1 && !keySeen) {
                        if (indexOf(body, i + 1, nameEnd - 1, (byte) '\\') >= 0) {
                            return false; // escaped: only the decoded name can be compared
                        }
                        isKey = equalsRange(body, i + 1, nameEnd - 1, keyName);
                    }
                    i = skipBlanks(body, nameEnd, e);
                    if (i >= e || body[i] != ':') {
                        return false;
                    }
                    i = skipBlanks(body, i + 1, e);
                    if (i >= e) {
                        return false;
                    }
                    if (isKey) {
                        keySeen = true;
                        byte c = body[i];
                        if (c == '"') {
                            int end = scanString(body, i + 1, e);
                            if (end < 0 || indexOf(body, i + 1, end - 1, (byte) '\\') >= 0) {
                                return false;
                            }
                            key = Arrays.copyOfRange(body, i + 1, end - 1);
                            i = end;
                        } else if (c == 'n') {
                            i = literal(body, i, e, NULL);
                        } else if (c == 't' || c == 'f') {
                            int end = literal(body, i, e, c == 't' ? TRUE : FALSE);
                            key = end < 0 ? null : Arrays.copyOfRange(body, i, end);
                            i = end;
                        } else {
                            int end = number(body, i, e);
                            key = end < 0 ? null : Arrays.copyOfRange(body, i, end);
                            i = end;
                        }
                        if (i < 0) {
                            return false;
                        }
                        value = false;
                    } else {
                        value = true;
                        continue;
                    }
                } else {
                    byte c = body[i];
                    if (c == '{' || c == '[') {
                        if (++depth > depthLimit) {
                            return false;
                        }
                        objects = c == '{' ? objects | (1L << (depth - 1)) : objects & ~(1L << (depth - 1));
                        i = skipBlanks(body, i + 1, e);
                        if (i >= e) {
                            return false;
                        }
                        if (body[i] != (c == '{' ? '}' : ']')) {
                            value = c == '[';
                            continue;
                        }
                        depth--; // empty container
                        i++;
                    } else if (c == '"') {
                        i = scanString(body, i + 1, e);
                    } else if (c == 't') {
                        i = literal(body, i, e, TRUE);
                    } else if (c == 'f') {
                        i = literal(body, i, e, FALSE);
                    } else if (c == 'n') {
                        i = literal(body, i, e, NULL);
                    } else {
                        i = number(body, i, e);
                    }
                    if (i < 0) {
                        return false;
                    }
                }
                // after a value: the end of the line at depth 0, else ',' or the end of containers
                while (true) {
                    if (depth == 0) {
                        if (i != e) {
                            return false;
                        }
                        break;
                    }
                    i = skipBlanks(body, i, e);
                    if (i >= e) {
                        return false;
                    }
                    boolean inObject = (objects & (1L << (depth - 1))) != 0;
                    byte c = body[i++];
                    if (c == ',') {
                        value = !inObject;
                        break;
                    }
                    if (c != (inObject ? '}' : ']')) {
                        return false;
                    }
                    depth--;
                }
                if (depth == 0) {
                    break;
                }
            }
            events.setKey(k, key);
        }
        return true;
    }

    private static int skipBlanks(byte[] b, int i, int end) {
        while (i < end && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r')) {
            i++;
        }
        return i;
    }

    /**
     * From just after an opening quote: the index after the closing quote, or -1 for anything the fast scan leaves to
     * the parser (an unescaped control character, an escape other than RFC 8259's, no closing quote on the line).
     */
    private static int scanString(byte[] b, int i, int end) {
        while (i < end) {
            byte c = b[i];
            if (c == '"') {
                return i + 1;
            }
            if (c == '\\') {
                if (i + 1 >= end) {
                    return -1;
                }
                byte x = b[i + 1];
                if (x == 'u') {
                    if (i + 5 >= end || !isHex(b[i + 2]) || !isHex(b[i + 3]) || !isHex(b[i + 4]) || !isHex(b[i + 5])) {
                        return -1;
                    }
                    i += 6;
                } else if (x == '"' || x == '\\' || x == '/' || x == 'b' || x == 'f' || x == 'n' || x == 'r' || x == 't') {
                    i += 2;
                } else {
                    return -1;
                }
            } else if (c >= 0 && c < 0x20) {
                return -1;
            } else {
                i++; // ASCII, or a byte of a sequence pass 1 found to be strict UTF-8
            }
        }
        return -1;
    }

    private static boolean isHex(byte c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    /** {@code -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?}: the index after it, or -1. */
    private static int number(byte[] b, int i, int end) {
        int start = i;
        if (i < end && b[i] == '-') {
            i++;
        }
        if (i >= end || !isDigit(b[i])) {
            return -1;
        }
        if (b[i] == '0') {
            i++;
        } else {
            i = digits(b, i, end);
        }
        if (i < end && b[i] == '.') {
            int f = digits(b, i + 1, end);
            if (f == i + 1) {
                return -1;
            }
            i = f;
        }
        if (i < end && (b[i] == 'e' || b[i] == 'E')) {
            i++;
            if (i < end && (b[i] == '+' || b[i] == '-')) {
                i++;
            }
            int x = digits(b, i, end);
            if (x == i) {
                return -1;
            }
            i = x;
        }
        return i - start > MAX_SCANNED_TOKEN ? -1 : i;
    }

    private static int digits(byte[] b, int i, int end) {
        while (i < end && isDigit(b[i])) {
            i++;
        }
        return i;
    }

    private static boolean isDigit(byte c) {
        return c >= '0' && c <= '9';
    }

    /** The index after {@code word} at {@code i}, or -1. */
    private static int literal(byte[] b, int i, int end, byte[] word) {
        if (end - i < word.length) {
            return -1;
        }
        for (int j = 0; j < word.length; j++) {
            if (b[i + j] != word[j]) {
                return -1;
            }
        }
        return i + word.length;
    }

    private static boolean equalsRange(byte[] b, int from, int to, byte[] expected) {
        return Arrays.equals(b, from, to, expected, 0, expected.length);
    }

    private static int indexOf(byte[] b, int from, int to, byte value) {
        for (int i = from; i < to; i++) {
            if (b[i] == value) {
                return i;
            }
        }
        return -1;
    }

    /** The index where the physical line holding {@code pos} starts (for error messages only). */
    private static int lineStartBefore(byte[] body, int pos) {
        int i = pos;
        while (i > 0 && body[i - 1] != '\n') {
            i--;
        }
        return i;
    }

    private static boolean isBlankOrNewline(byte b) {
        return isBlank(b) || b == '\n';
    }

    private static boolean startsWithByteOrderMark(byte[] b, int from, int to) {
        return to - from >= 3 && b[from] == (byte) 0xEF && b[from + 1] == (byte) 0xBB && b[from + 2] == (byte) 0xBF;
    }

    private static boolean isBlank(byte b) {
        return b == ' ' || b == '\t' || b == '\r';
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "malformed";
        }
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }
}
