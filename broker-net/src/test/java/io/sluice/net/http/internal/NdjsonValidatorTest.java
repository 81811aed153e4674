package io.sluice.net.http.internal;

import io.sluice.net.http.internal.NdjsonValidator.Events;
import io.sluice.net.http.internal.NdjsonValidator.Rejection;
import io.sluice.net.http.internal.NdjsonValidator.Result;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class NdjsonValidatorTest {
    private final NdjsonValidator validator = new NdjsonValidator(1024, 8);

    private Result validate(String body) {
        return validate(body.getBytes(StandardCharsets.UTF_8), null);
    }

    private Result validate(byte[] body, String keyField) {
        return validator.validate(body, 0, body.length, keyField);
    }

    private static List<String> values(Result result, byte[] body) {
        assertThat(result).isInstanceOf(Events.class);
        Events events = (Events) result;
        List<String> out = new ArrayList<>();
        for (int i = 0; i < events.count(); i++) {
            out.add(new String(body, events.start(i), events.end(i) - events.start(i), StandardCharsets.UTF_8));
        }
        return out;
    }

    private static Rejection rejection(Result result) {
        assertThat(result).isInstanceOf(Rejection.class);
        return (Rejection) result;
    }

    @Test
    void everyLineIsOneEventKeptByteForByte() {
        String body = "{\"a\":1}\n[1, 2,3]\n\"text with ü and 🎉\"\n42\ntrue\nnull\n";
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        assertThat(values(validate(bytes, null), bytes))
                .containsExactly("{\"a\":1}", "[1, 2,3]", "\"text with ü and 🎉\"", "42", "true", "null");
    }

    @Test
    void blankLinesAreSkippedButCountedAndCrlfAndSurroundingBlanksAreTrimmed() {
        String body = "\n  {\"a\":1}\r\n\t\r\n{\"b\":2}  ";
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        Result result = validate(bytes, null);
        assertThat(values(result, bytes)).containsExactly("{\"a\":1}", "{\"b\":2}");
        assertThat(((Events) result).line(0)).isEqualTo(2);
        assertThat(((Events) result).line(1)).isEqualTo(4);
    }

    @Test
    void aBodyWithoutEventsIsRejected() {
        assertThat(rejection(validate("")).reason()).contains("no events");
        assertThat(rejection(validate("\n \r\n\n")).line()).isZero();
    }

    @Test
    void badJsonIsRejectedNamingItsLine() {
        Rejection r = rejection(validate("{\"ok\":1}\n{\"ok\":2}\n{\"broken\": }\n{\"ok\":4}\n"));
        assertThat(r.line()).isEqualTo(3);
        assertThat(r.message()).startsWith("line 3: invalid JSON at column");
    }

    @Test
    void aValueRunningOnIntoTheNextLineIsRejectedAtTheLineWhereItStarts() {
        Rejection r = rejection(validate("{\"ok\":1}\n{\"open\":\n1}\n{\"ok\":3}\n"));
        assertThat(r.line()).isEqualTo(2);
        assertThat(r.reason()).contains("not complete at the end of the line");
        assertThat(rejection(validate("[1,\n2]")).line()).isEqualTo(1);
        assertThat(rejection(validate("\"no end\n\"")).line()).isEqualTo(1);
    }

    @Test
    void scalarsMayBeFollowedByBlanksButNotByMoreData() {
        byte[] body = "123  \n-1.5e3\t\r\ntrue \nnull".getBytes(StandardCharsets.UTF_8);
        assertThat(values(validate(body, null), body)).containsExactly("123", "-1.5e3", "true", "null");
        assertThat(rejection(validate("12 3")).reason()).contains("after the JSON value");
        assertThat(rejection(validate("1\n\"a\" \"b\"")).line()).isEqualTo(2);
        assertThat(rejection(validate("{}{}")).reason()).contains("after the JSON value");
    }

    @Test
    void theFirstBadLineIsReportedWhateverIsWrongWithIt() {
        byte[] jsonFirst = concat("1\n{bad}\n3\n".getBytes(StandardCharsets.UTF_8), new byte[]{'"', (byte) 0xFF, '"'});
        assertThat(rejection(validate(jsonFirst, null)).line()).isEqualTo(2);
        byte[] utf8First = concat(new byte[]{'1', '\n', '"', (byte) 0xFF, '"', '\n'}, "{bad}\n".getBytes(StandardCharsets.UTF_8));
        Rejection r = rejection(validate(utf8First, null));
        assertThat(r.line()).isEqualTo(2);
        assertThat(r.reason()).startsWith("invalid UTF-8");
        Rejection tooLong = rejection(validate("{bad}\n\"" + "x".repeat(2000) + "\"\n"));
        assertThat(tooLong.line()).isEqualTo(1);
    }

    @Test
    void truncatedJsonIsRejected() {
        assertThat(rejection(validate("{\"a\":[1,2")).line()).isEqualTo(1);
        assertThat(rejection(validate("\"unterminated")).line()).isEqualTo(1);
    }

    @Test
    void twoValuesOnOneLineAreRejected() {
        Rejection r = rejection(validate("{\"a\":1}\n{\"a\":1} {\"b\":2}\n"));
        assertThat(r.line()).isEqualTo(2);
        assertThat(r.reason()).contains("after the JSON value");
    }

    @Test
    void nonStandardJsonIsRejected() {
        assertThat(rejection(validate("{'single':1}")).reason()).contains("invalid JSON");
        assertThat(rejection(validate("NaN")).reason()).contains("invalid JSON");
        assertThat(rejection(validate("[1,2,]")).reason()).contains("invalid JSON");
        assertThat(rejection(validate("{\"a\":1} // comment")).line()).isEqualTo(1);
        assertThat(rejection(validate("{\"ctl\":\"a\u0001b\"}")).reason()).contains("invalid JSON");
    }

    @Test
    void nestingDeeperThanTheLimitIsRejected() {
        assertThat(validate("[[[[[[[[1]]]]]]]]")).isInstanceOf(Events.class); // 8 levels: the limit
        Rejection r = rejection(validate("{\"a\":1}\n[[[[[[[[[1]]]]]]]]]\n"));
        assertThat(r.line()).isEqualTo(2);
        assertThat(r.reason()).contains("deeper than 8");
        String hostile = "[".repeat(100_000);
        Rejection deep = rejection(new NdjsonValidator(1 << 20, 64).validate(hostile.getBytes(StandardCharsets.US_ASCII), 0, hostile.length(), null));
        assertThat(deep.reason()).contains("deeper than 64");
    }

    @Test
    void anOversizedLineIsRejectedNamingItsLengthAndTheSetting() {
        String big = "\"" + "x".repeat(2000) + "\"";
        Rejection r = rejection(validate("1\n" + big + "\n"));
        assertThat(r.line()).isEqualTo(2);
        assertThat(r.reason()).contains("2002 bytes").contains("http.max.line.bytes");
    }

    @Test
    void malformedUtf8IsRejectedEvenInsideStrings() {
        byte[][] bad = {
                {'"', (byte) 0xC3, '"'},                          // truncated 2-byte sequence
                {'"', (byte) 0x80, '"'},                          // lone continuation byte
                {'"', (byte) 0xC0, (byte) 0x80, '"'},             // overlong NUL
                {'"', (byte) 0xE0, (byte) 0x80, (byte) 0xAF, '"'}, // overlong '/'
                {'"', (byte) 0xED, (byte) 0xA0, (byte) 0x80, '"'}, // UTF-16 surrogate U+D800
                {'"', (byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80, '"'}, // above U+10FFFF
                {'"', (byte) 0xFF, '"'},
                {'"', (byte) 0xE2, (byte) 0x82, '\n', (byte) 0xAC, '"'}, // sequence cut by a newline
        };
        for (byte[] line : bad) {
            byte[] body = concat("{\"fine\":true}\n".getBytes(StandardCharsets.UTF_8), line);
            Rejection r = rejection(validate(body, null));
            assertThat(r.line()).as(Arrays.toString(line)).isEqualTo(2);
            assertThat(r.reason()).startsWith("invalid UTF-8");
        }
    }

    @Test
    void wellFormedMultiByteUtf8IsAccepted() {
        String text = "\"\u00e9\u20ac\ud83d\ude00\uffff\u0800\ud7ff\ue000\udbff\udfff\"";
        byte[] body = text.getBytes(StandardCharsets.UTF_8);
        assertThat(values(validate(body, null), body)).containsExactly(text);
    }

    @Test
    void theKeyFieldBecomesTheEventKey() {
        byte[] body = ("{\"user\":\"ann\",\"n\":1}\n{\"n\":2,\"user\":42}\n{\"n\":3}\n{\"user\":null}\n"
                + "{\"nested\":{\"user\":\"inner\"},\"user\":true}\n").getBytes(StandardCharsets.UTF_8);
        Events events = (Events) validate(body, "user");
        assertThat(events.count()).isEqualTo(5);
        assertThat(key(events, 0)).isEqualTo("ann");
        assertThat(key(events, 1)).isEqualTo("42");
        assertThat(events.key(2)).isNull();
        assertThat(events.key(3)).isNull();
        assertThat(key(events, 4)).isEqualTo("true");
    }

    @Test
    void withAKeyFieldEveryEventMustBeAnObjectWithAScalarKey() {
        Rejection notObject = rejection(validate("{\"user\":\"a\"}\n[1]\n".getBytes(StandardCharsets.UTF_8), "user"));
        assertThat(notObject.line()).isEqualTo(2);
        assertThat(notObject.reason()).contains("must be a JSON object");
        Rejection structured = rejection(validate("{\"user\":{\"id\":1}}".getBytes(StandardCharsets.UTF_8), "user"));
        assertThat(structured.reason()).contains("string, number or boolean");
    }

    @Test
    void validatesOnlyTheGivenRangeOfTheArray() {
        byte[] body = "garbage{\"a\":1}\n2garbage".getBytes(StandardCharsets.UTF_8);
        Result result = validator.validate(body, 7, body.length - 7, null);
        assertThat(values(result, body)).containsExactly("{\"a\":1}", "2");
    }

    private static String key(Events events, int i) {
        return new String(events.key(i), StandardCharsets.UTF_8);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
