package io.sluice.bench.scenario.redis;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * The 000 reference's message: a JSON envelope around a 1,024-character alphanumeric payload,
 * {@code {"id":"it1-42","messageId":"it1-42","sequence":42,"payload":"…","metadata":{"source":"benchmark",
 * "iteration":"it1","size":1024,"timestamp":1700000000000}}}.
 */
final class Envelope {
    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    private static final byte[] SEQUENCE = "\"sequence\":".getBytes(StandardCharsets.US_ASCII);

    private final String payload;

    Envelope(int payloadSize, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        StringBuilder b = new StringBuilder(payloadSize);
        for (int i = 0; i < payloadSize; i++) {
            b.append(ALPHABET.charAt(r.nextInt(ALPHABET.length())));
        }
        this.payload = b.toString();
    }

    byte[] build(String iteration, int sequence) {
        String id = iteration + "-" + sequence;
        return new StringBuilder(payload.length() + 200)
                .append("{\"id\":\"").append(id).append("\",\"messageId\":\"").append(id)
                .append("\",\"sequence\":").append(sequence)
                .append(",\"payload\":\"").append(payload)
                .append("\",\"metadata\":{\"source\":\"benchmark\",\"iteration\":\"").append(iteration)
                .append("\",\"size\":").append(payload.length())
                .append(",\"timestamp\":").append(System.currentTimeMillis()).append("}}")
                .toString().getBytes(StandardCharsets.UTF_8);
    }

    /** The envelope's sequence number, or -1 when it has none. */
    static int sequence(byte[] json) {
        outer:
        for (int i = 0; i + SEQUENCE.length < json.length; i++) {
            for (int j = 0; j < SEQUENCE.length; j++) {
                if (json[i + j] != SEQUENCE[j]) {
                    continue outer;
                }
            }
            int v = 0;
            for (int k = i + SEQUENCE.length; k < json.length; k++) {
                int d = json[k] - '0';
                if (d < 0 || d > 9) {
                    return v;
                }
                v = v * 10 + d;
            }
            return v;
        }
        return -1;
    }
}
