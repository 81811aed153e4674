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
            b("\\ud800"), b("NaN"), b("/*"), b("'"), {0}, {0x7f},
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
