package io.sluice.core;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

/**
 * An event to send.
 *
 * @param topic     the topic; must exist
 * @param partition an explicit partition, or {@code null} to let the producer's partitioner choose
 *                  (key hash when a key is present, round-robin otherwise)
 * @param key       optional key bytes ({@code null} for none)
 * @param value     the payload; never null (may be empty)
 * @param headers   headers, possibly empty
 * @param timestamp epoch millis, or {@link #NO_TIMESTAMP} to let the broker stamp it at send time
 */
public record ProducerRecord(String topic, Integer partition, byte[] key, byte[] value, List<Header> headers, long timestamp) {
    public static final long NO_TIMESTAMP = -1L;

    public ProducerRecord {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(value, "value");
        headers = headers == null ? List.of() : headers;
    }

    public static ProducerRecord of(String topic, byte[] value) {
        return new ProducerRecord(topic, null, null, value, List.of(), NO_TIMESTAMP);
    }

    public static ProducerRecord of(String topic, byte[] key, byte[] value) {
        return new ProducerRecord(topic, null, key, value, List.of(), NO_TIMESTAMP);
    }

    public static ProducerRecord of(String topic, String key, String value) {
        return new ProducerRecord(topic, null, key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                value.getBytes(StandardCharsets.UTF_8), List.of(), NO_TIMESTAMP);
    }

    public ProducerRecord withPartition(int p) {
        return new ProducerRecord(topic, p, key, value, headers, timestamp);
    }

    public ProducerRecord withHeaders(List<Header> h) {
        return new ProducerRecord(topic, partition, key, value, h, timestamp);
    }

    public ProducerRecord withTimestamp(long epochMillis) {
        return new ProducerRecord(topic, partition, key, value, headers, epochMillis);
    }

    /** Bytes this record occupies in the journal, compared against {@code maxEventSize}. */
    public int serializedSize() {
        int size = 8 + 8 + 4 + (key == null ? 0 : key.length) + 2 + 4 + value.length;
        // indexed, not for-each: this runs on every send, and the list iterator is not always scalar-replaced
        for (int i = 0, n = headers.size(); i < n; i++) {
            Header h = headers.get(i);
            size += 2 + utf8Length(h.key()) + 4 + h.value().length;
        }
        return size;
    }

    /** Length of {@code s} encoded by {@code getBytes(UTF_8)}, without encoding it (a lone surrogate becomes '?'). */
    static int utf8Length(String s) {
        int n = s.length();
        int bytes = n;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                continue;
            }
            if (c < 0x800) {
                bytes += 1;
            } else if (!Character.isSurrogate(c)) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                bytes += 2; // two chars, four bytes
                i++;
            } // a lone surrogate is one '?'
        }
        return bytes;
    }
}
