package io.sluice.redis.internal;

import io.lettuce.core.StreamMessage;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.Header;
import io.sluice.core.ProducerRecord;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How one Sluice event is laid out as the fields of a stream entry (all binary-safe):
 *
 * <pre>
 * v            the value (always present, may be empty)
 * k            the key (only when the record has one)
 * ts           the producer's timestamp, decimal epoch ms (only when the record has one; otherwise
 *              the entry id's millisecond part, Redis's clock, is the timestamp)
 * h.&lt;name&gt;     one field per header, in order
 * </pre>
 *
 * A field that is none of these (an entry written by another tool) is ignored; an entry without {@code v} is read
 * with an empty value, so foreign entries never stop a consumer.
 */
public final class StreamFields {
    static final byte[] VALUE = {'v'};
    static final byte[] KEY = {'k'};
    static final byte[] TIMESTAMP = {'t', 's'};
    static final String HEADER_PREFIX = "h.";
    private static final byte[] EMPTY = new byte[0];

    private StreamFields() {
    }

    /** Key/value pairs for {@code XADD key [args] * field value ...}. */
    public static Object[] encode(ProducerRecord r) {
        int n = 2 + (r.key() != null ? 2 : 0) + (r.timestamp() != ProducerRecord.NO_TIMESTAMP ? 2 : 0) + 2 * r.headers().size();
        Object[] kv = new Object[n];
        int i = 0;
        kv[i++] = VALUE;
        kv[i++] = r.value();
        if (r.key() != null) {
            kv[i++] = KEY;
            kv[i++] = r.key();
        }
        if (r.timestamp() != ProducerRecord.NO_TIMESTAMP) {
            kv[i++] = TIMESTAMP;
            kv[i++] = Long.toString(r.timestamp()).getBytes(StandardCharsets.US_ASCII);
        }
        for (Header h : r.headers()) {
            kv[i++] = (HEADER_PREFIX + h.key()).getBytes(StandardCharsets.UTF_8);
            kv[i++] = h.value();
        }
        return kv;
    }

    /** Bytes of the event as {@code maxEventBytes} counts them: key + value + header names and values. */
    public static int size(ProducerRecord r) {
        int size = r.value().length + (r.key() == null ? 0 : r.key().length);
        for (Header h : r.headers()) {
            size += h.key().length() + h.value().length;
        }
        return size;
    }

    public static ConsumerRecord decode(String topic, int partition, StreamMessage<byte[], byte[]> m) {
        return decode(topic, partition, m.getId(), m.getBody());
    }

    /** The event of entry {@code id} with these fields. */
    public static ConsumerRecord decode(String topic, int partition, String id, Map<byte[], byte[]> body) {
        long offset = EntryIds.toOffset(id);
        byte[] value = EMPTY;
        byte[] key = null;
        long timestamp = EntryIds.millis(offset);
        List<Header> headers = List.of();
        for (Map.Entry<byte[], byte[]> f : body.entrySet()) {
            byte[] name = f.getKey();
            if (name.length == 1 && name[0] == 'v') {
                value = f.getValue();
            } else if (name.length == 1 && name[0] == 'k') {
                key = f.getValue();
            } else if (name.length == 2 && name[0] == 't' && name[1] == 's') {
                timestamp = parseLong(f.getValue(), timestamp);
            } else if (name.length > 2 && name[0] == 'h' && name[1] == '.') {
                if (headers.isEmpty()) {
                    headers = new ArrayList<>(4);
                }
                headers.add(new Header(new String(name, 2, name.length - 2, StandardCharsets.UTF_8), f.getValue()));
            }
        }
        return new ConsumerRecord(topic, partition, offset, timestamp, key, value, headers);
    }

    private static long parseLong(byte[] ascii, long fallback) {
        long v = 0;
        if (ascii.length == 0 || ascii.length > 19) {
            return fallback;
        }
        for (byte b : ascii) {
            if (b < '0' || b > '9') {
                return fallback;
            }
            v = v * 10 + (b - '0');
        }
        return v;
    }
}
