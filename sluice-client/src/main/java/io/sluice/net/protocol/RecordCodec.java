package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.Header;
import io.sluice.core.ProducerRecord;

import java.util.ArrayList;
import java.util.List;

/**
 * Records on the wire.
 * <pre>
 * produced record:  timestamp int64 | key bytes | value bytes (not null) | headers array
 * fetched record:   offset int64 | timestamp int64 | key bytes | value bytes | headers array
 * header:           key string (not null) | value bytes (not null)
 * </pre>
 */
public final class RecordCodec {
    /** Smallest encoded produced record: timestamp + two lengths + header count. */
    public static final int MIN_PRODUCED_RECORD_SIZE = 8 + 4 + 4 + 4;
    public static final int MIN_FETCHED_RECORD_SIZE = 8 + MIN_PRODUCED_RECORD_SIZE;
    private static final int MIN_HEADER_SIZE = 2 + 4;

    private RecordCodec() {
    }

    public static void writeProduced(ByteBuf out, ProducerRecord r, long timestamp) {
        out.writeLong(timestamp);
        Wire.writeBytes(out, r.key());
        Wire.writeBytes(out, r.value());
        writeHeaders(out, r.headers());
    }

    /** Encoded size of a produced record, for batch and buffer-memory accounting. */
    public static int producedSize(ProducerRecord r) {
        int size = MIN_PRODUCED_RECORD_SIZE + (r.key() == null ? 0 : r.key().length) + r.value().length;
        for (Header h : r.headers()) {
            size += MIN_HEADER_SIZE + h.key().length() * 3 + h.value().length;
        }
        return size;
    }

    public static ProducerRecord readProduced(ByteBuf in, String topic, int partition) {
        long timestamp = Wire.readLong(in);
        byte[] key = Wire.readBytes(in);
        byte[] value = Wire.readBytes(in);
        if (value == null) {
            throw new ProtocolException("record value must not be null");
        }
        List<Header> headers = readHeaders(in);
        return new ProducerRecord(topic, partition, key, value, headers, timestamp);
    }

    public static void writeFetched(ByteBuf out, ConsumerRecord r) {
        out.writeLong(r.offset());
        out.writeLong(r.timestamp());
        Wire.writeBytes(out, r.key());
        Wire.writeBytes(out, r.value());
        writeHeaders(out, r.headers());
    }

    public static ConsumerRecord readFetched(ByteBuf in, String topic, int partition) {
        long offset = Wire.readLong(in);
        long timestamp = Wire.readLong(in);
        byte[] key = Wire.readBytes(in);
        byte[] value = Wire.readBytes(in);
        if (value == null) {
            throw new ProtocolException("record value must not be null");
        }
        return new ConsumerRecord(topic, partition, offset, timestamp, key, value, readHeaders(in));
    }

    private static void writeHeaders(ByteBuf out, List<Header> headers) {
        out.writeInt(headers.size());
        for (Header h : headers) {
            Wire.writeString(out, h.key());
            Wire.writeBytes(out, h.value());
        }
    }

    private static List<Header> readHeaders(ByteBuf in) {
        int count = Wire.readCount(in, MIN_HEADER_SIZE, "header");
        if (count == 0) {
            return List.of();
        }
        List<Header> headers = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            String key = Wire.readRequiredString(in, "header key");
            byte[] value = Wire.readBytes(in);
            if (value == null) {
                throw new ProtocolException("header value must not be null");
            }
            headers.add(new Header(key, value));
        }
        return headers;
    }
}
