package io.sluice.net.http.internal;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.sluice.net.http.internal.NdjsonValidator.Events;
import io.sluice.net.http.internal.NdjsonValidator.Rejection;
import io.sluice.net.http.internal.NdjsonValidator.Result;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bounded-time fuzzing of the NDJSON validator (2,200 generated bodies a run, a second or two). The validator is
 * compared with an independent oracle — the JDK's strict UTF-8 decoder plus Jackson's tree parser with trailing
 * tokens forbidden — so it must accept exactly the bodies whose every non-blank line is one valid JSON value, and
 * must never throw. Inputs that ever broke it are kept below as {@link Example}s.
 */
class NdjsonValidatorFuzzTest {
    private static final int MAX_DEPTH = 40;
    private static final ObjectMapper ORACLE = JsonMapper.builder().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).build();
    private final NdjsonValidator validator = new NdjsonValidator(1 << 16, MAX_DEPTH);

    /** Fragments of almost-JSON, including every kind of malformed UTF-8, glued together at random. */
    private static final byte[][] FRAGMENTS = {
            b("{"), b("}"), b("["), b("]"), b("\""), b(":"), b(","), b(" "), b("\n"), b("\r\n"), b("\t"),
            b("1"), b("-0.5e3"), b("01"), b("true"), b("fals"), b("null"), b("\"k\":"), b("\"v\""), b("\\"), b("\\u00e9"),
            b("\\ud800"), b("NaN"), b("/*"), b("'"), {0}, {0x1f}, {0x7f}, b("\\/"), b("1e+"), b("-"), b("."),
            {(byte) 0xC3, (byte) 0xA9}, {(byte) 0xE2, (byte) 0x82, (byte) 0xAC}, {(byte) 0xF0, (byte) 0x9F, (byte) 0x98, (byte) 0x80},
            {(byte) 0xC3}, {(byte) 0x80}, {(byte) 0xC0, (byte) 0x80}, {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
            {(byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80}, {(byte) 0xFF}, {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF},
    };

    @Property(tries = 1500)
    void acceptsExactlyWhatTheOracleAcceptsForNearJsonInput(@ForAll("nearJson") byte[] body) {
        checkAgainstOracle(body);
    }

    @Property(tries = 500)
    void neverThrowsOnArbitraryBytes(@ForAll @Size(max = 512) byte[] body) {
        checkAgainstOracle(body);
    }

    @Property(tries = 200)
    void acceptsEveryBodyOfValidJsonLinesKeepingEachLineAsItsEvent(@ForAll long seed, @ForAll @IntRange(min = 1, max = 20) int lines) throws Exception {
        Random random = new Random(seed);
        List<String> expected = new ArrayList<>();
        StringBuilder body = new StringBuilder();
        for (int i = 0; i < lines; i++) {
            String line = ORACLE.writeValueAsString(randomJson(random, 0));
            expected.add(line);
            body.append(line).append(random.nextBoolean() ? "\n" : "\r\n");
        }
        byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
        Result result = validator.validate(bytes, 0, bytes.length, null);
        assertThat(result).isInstanceOf(Events.class);
        Events events = (Events) result;
        List<String> actual = new ArrayList<>();
        for (int i = 0; i < events.count(); i++) {
            actual.add(new String(bytes, events.start(i), events.end(i) - events.start(i), StandardCharsets.UTF_8));
        }
        assertThat(actual).isEqualTo(expected);
    }

    @Property(tries = 1500)
    void theFastScanAnswersExactlyWhatTheParserAloneAnswers(@ForAll("nearJson") byte[] body, @ForAll("keyFields") String keyField) {
        assertSameAnswerAsTheParser(body, keyField);
    }

    @Property(tries = 300)
    void theFastScanFindsTheSameEventsAndKeysAsTheParserInValidBodies(@ForAll long seed, @ForAll @IntRange(min = 1, max = 10) int lines) throws Exception {
        Random random = new Random(seed);
        StringBuilder body = new StringBuilder();
        for (int i = 0; i < lines; i++) {
            Object value = random.nextInt(4) == 0 ? randomJson(random, 0) : randomObject(random, 0);
            body.append(random.nextBoolean() ? " " : "").append(ORACLE.writeValueAsString(value)).append(random.nextBoolean() ? "\n" : "\r\n");
        }
        byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
        assertSameAnswerAsTheParser(bytes, null);
        assertSameAnswerAsTheParser(bytes, "k" + random.nextInt(10));
    }

    @Example
    void aKeyMemberIsTakenFromItsFirstTopLevelOccurrenceAsItsTextWhateverTheScalarType() {
        for (String line : List.of("{\"k\":\"a\u00e9\"}", "{\"k\":\"\\u0041\"}", "{\"k\":-1.5e3,\"k\":2}", "{\"\\u006b\":1}",
                "{\"x\":{\"k\":1},\"k\":true}", "{\"k\":null,\"k\":1}", "{\"k\":[1]}", "{\"k\":{}}", "[1]", "{}")) {
            assertSameAnswerAsTheParser(b(line), "k");
        }
    }

    @Example
    void everyBoundaryOfTheFastScanGivesTheParsersAnswer() {
        List<String> lines = new ArrayList<>();
        for (char c = 0; c < 0x20; c++) { // unescaped control characters, in a value and in a key
            lines.add("\"a" + c + "b\"");
            lines.add("{\"k\":\"" + c + "\"}");
        }
        lines.addAll(List.of("\"\\x\"", "\"\\u12g4\"", "\"\\u123\"", "01", "-", "1.", ".5", "1e", "1e+", "-0", "1E-7", "tru", "nulll",
                "[1,]", "{\"a\":1,}", "{\"a\" 1}", "[1 2]", "{\"a\":1]", "[\u00e9]", "\"\u00e9\"", "[" + "1".repeat(300) + "]",
                "{\"" + "n".repeat(300) + "\":1}", "[".repeat(63) + "]".repeat(63), "[".repeat(64) + "]".repeat(64), "[".repeat(65) + "]".repeat(65)));
        NdjsonValidator deep = new NdjsonValidator(1 << 16, 64);
        for (String line : lines) {
            for (String key : new String[] {null, "k"}) {
                byte[] body = b(line);
                assertThat(deep.validate(body, 0, body.length, key)).as("%s with key %s", line, key)
                        .usingRecursiveComparison().isEqualTo(deep.validateWithParser(body, 0, body.length, key));
            }
        }
    }

    @Provide
    Arbitrary<String> keyFields() {
        return Arbitraries.of("k", "v", "k1", "\u00e9").injectNull(0.4);
    }

    private void assertSameAnswerAsTheParser(byte[] body, String keyField) {
        Result fast = validator.validate(body, 0, body.length, keyField);
        Result parsed = validator.validateWithParser(body, 0, body.length, keyField);
        if (parsed instanceof Rejection) {
            assertThat(fast).as("key %s", keyField).isEqualTo(parsed);
            return;
        }
        assertThat(fast).as("key %s, parser: %s", keyField, parsed).isInstanceOf(Events.class);
        Events f = (Events) fast;
        Events p = (Events) parsed;
        assertThat(f.count()).isEqualTo(p.count());
        for (int i = 0; i < p.count(); i++) {
            assertThat(new int[] {f.line(i), f.start(i), f.end(i)}).isEqualTo(new int[] {p.line(i), p.start(i), p.end(i)});
            assertThat(f.key(i)).as("key %s of event %d", keyField, i).isEqualTo(p.key(i));
        }
    }

    private static java.util.Map<String, Object> randomObject(Random r, int depth) {
        java.util.Map<String, Object> map = new java.util.LinkedHashMap<>();
        int n = r.nextInt(5);
        for (int i = 0; i < n; i++) {
            map.put("k" + r.nextInt(10), r.nextInt(3) == 0 ? randomObject(r, depth + 1) : randomJson(r, depth + 1));
        }
        return map;
    }

    /** Found by the fuzzer (the oracle was wrong): Jackson ends a document at NUL, so "1\0" looked valid to it. */
    @Example
    void aNulAfterAValueIsRejected() {
        byte[] body = {'1', 0};
        assertThat(validator.validate(body, 0, body.length, null)).isInstanceOf(Rejection.class);
        checkAgainstOracle(body);
    }

    /** Found while writing the oracle: Jackson skips a BOM as a document start, so a BOM-only line was an "event". */
    @Example
    void aByteOrderMarkAloneIsNotAnEvent() {
        byte[] bom = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};
        assertThat(validator.validate(bom, 0, 3, null)).isInstanceOf(Rejection.class);
        byte[] twoLines = {'1', '\n', (byte) 0xEF, (byte) 0xBB, (byte) 0xBF};
        assertThat(validator.validate(twoLines, 0, twoLines.length, null)).isInstanceOf(Rejection.class);
        checkAgainstOracle(bom);
    }

    @Example
    void aByteOrderMarkStartingTheBodyIsSkipped() {
        byte[] body = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF, '{', '}'};
        Events events = (Events) validator.validate(body, 0, body.length, null);
        assertThat(events.start(0)).isEqualTo(3);
    }

    @Provide
    Arbitrary<byte[]> nearJson() {
        return Arbitraries.integers().between(0, FRAGMENTS.length - 1).list().ofMaxSize(60).map(indexes -> {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (int i : indexes) {
                out.writeBytes(FRAGMENTS[i]);
            }
            return out.toByteArray();
        });
    }

    private void checkAgainstOracle(byte[] body) {
        Result result = validator.validate(body, 0, body.length, null);
        String oracleRejects = oracle(body);
        if (oracleRejects == null) {
            assertThat(result).as("valid body rejected: %s", result).isInstanceOf(Events.class);
        } else {
            assertThat(result).as("oracle rejects (%s)", oracleRejects).isInstanceOf(Rejection.class);
        }
    }

    /** Null if every non-blank line is strict UTF-8 holding exactly one JSON value and there is at least one; else why not. */
    private static String oracle(byte[] body) {
        int events = 0;
        int start = body.length >= 3 && body[0] == (byte) 0xEF && body[1] == (byte) 0xBB && body[2] == (byte) 0xBF ? 3 : 0;
        for (int i = 0; i <= body.length; i++) {
            if (i == body.length || body[i] == '\n') {
                String line;
                try {
                    line = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                            .onUnmappableCharacter(CodingErrorAction.REPORT)
                            .decode(ByteBuffer.wrap(body, start, i - start)).toString();
                } catch (CharacterCodingException e) {
                    return "utf-8";
                }
                String trimmed = line.replaceAll("^[ \t\r]+|[ \t\r]+$", "");
                if (!trimmed.isEmpty()) {
                    if (trimmed.charAt(0) == '\uFEFF') {
                        return "byte order mark inside the body";
                    }
                    if (trimmed.indexOf('\u0000') >= 0) {
                        // RFC 8259 allows no NUL anywhere, but Jackson's tree parser stops at one as if at the end
                        return "NUL character";
                    }
                    try {
                        if (depth(trimmed) > MAX_DEPTH) {
                            return "depth";
                        }
                        if (ORACLE.readTree(trimmed.getBytes(StandardCharsets.UTF_8)).isMissingNode()) {
                            return "no value";
                        }
                    } catch (Exception e) {
                        return "json: " + e.getMessage();
                    }
                    events++;
                }
                start = i + 1;
            }
        }
        return events == 0 ? "empty" : null;
    }

    /** Nesting depth of brackets outside strings (only meaningful for inputs the parser then accepts). */
    private static int depth(String json) {
        int depth = 0;
        int max = 0;
        boolean inString = false;
        for (int i = 0; i < json.length(); i++) {
            char c = json.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '[' || c == '{') {
                max = Math.max(max, ++depth);
            } else if (c == ']' || c == '}') {
                depth--;
            }
        }
        return max;
    }

    private static Object randomJson(Random r, int depth) {
        int kind = depth >= 6 ? r.nextInt(5) : r.nextInt(7);
        switch (kind) {
            case 0: return null;
            case 1: return r.nextBoolean();
            case 2: return r.nextLong();
            case 3: return r.nextDouble() * 1e6;
            case 4: {
                StringBuilder s = new StringBuilder();
                int n = r.nextInt(8);
                for (int i = 0; i < n; i++) {
                    int cp = switch (r.nextInt(4)) {
                        case 0 -> 0x20 + r.nextInt(0x5f);
                        case 1 -> r.nextInt(0x20);                // control characters: must be escaped
                        case 2 -> 0x80 + r.nextInt(0xD800 - 0x80);
                        default -> 0x10000 + r.nextInt(0x10FFFF - 0x10000);
                    };
                    s.appendCodePoint(cp);
                }
                return s.toString();
            }
            case 5: {
                List<Object> list = new ArrayList<>();
                int n = r.nextInt(5);
                for (int i = 0; i < n; i++) {
                    list.add(randomJson(r, depth + 1));
                }
                return list;
            }
            default: {
                java.util.Map<String, Object> map = new java.util.LinkedHashMap<>();
                int n = r.nextInt(5);
                for (int i = 0; i < n; i++) {
                    map.put("k" + r.nextInt(100), randomJson(r, depth + 1));
                }
                return map;
            }
        }
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
