package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.Header;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;

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
        List<Header> headers = r.headers();
        // indexed, not for-each: this runs on every send, and the list iterator is not always scalar-replaced
        for (int i = 0, n = headers.size(); i < n; i++) {
            Header h = headers.get(i);
            size += MIN_HEADER_SIZE + h.key().length() * 3 + h.value().length;
        }
        return size;
    }

    /**
     * Walks {@code count} produced records from the reader index (which it leaves unchanged) using only their length
     * fields, and fails with {@link SluiceException.RecordTooLargeException} at the first one whose
     * {@link ProducerRecord#serializedSize()} would exceed {@code maxEventSize}. Nothing is allocated; a malformed
     * length is a {@link ProtocolException}.
     */
    public static void checkProducedSizes(ByteBuf in, int count, int maxEventSize) {
        int at = in.readerIndex();
        int end = in.writerIndex();
        for (int i = 0; i < count; i++) {
            need(at, 8 + 4, end, "record");
            at += 8; // timestamp
            int keyLength = in.getInt(at);
            at += 4;
            if (keyLength < -1) {
                throw new ProtocolException("negative bytes length " + keyLength);
            }
            long size = 8 + 8 + 4 + 2 + 4 + Math.max(0, keyLength); // as ProducerRecord.serializedSize()
            at = skip(at, Math.max(0, keyLength), end, "record key");
            need(at, 4, end, "record value length");
            int valueLength = in.getInt(at);
            at += 4;
            if (valueLength < 0) {
                throw new ProtocolException(valueLength == -1 ? "record value must not be null" : "negative bytes length " + valueLength);
            }
            size += valueLength;
            at = skip(at, valueLength, end, "record value");
            need(at, 4, end, "header count");
            int headers = in.getInt(at);
            at += 4;
            if (headers < 0 || (long) headers * MIN_HEADER_SIZE > end - at) {
                throw new ProtocolException("header count " + headers + " does not fit the frame");
            }
            for (int h = 0; h < headers; h++) {
                need(at, 2, end, "header key length");
                short keyBytes = in.getShort(at);
                at += 2;
                if (keyBytes < 0) {
                    throw new ProtocolException("header key must not be null");
                }
                at = skip(at, keyBytes, end, "header key");
                need(at, 4, end, "header value length");
                int valueBytes = in.getInt(at);
                at += 4;
                if (valueBytes < 0) {
                    throw new ProtocolException("header value must not be null");
                }
                at = skip(at, valueBytes, end, "header value");
                size += 2 + keyBytes + 4 + valueBytes;
            }
            if (size > maxEventSize) {
                throw new SluiceException.RecordTooLargeException("record " + i + " of " + size
                        + " bytes exceeds maxEventSize=" + maxEventSize + "; nothing of the batch was written");
            }
        }
    }

    private static void need(int at, int n, int end, String what) {
        if (end - at < n) {
            throw new ProtocolException("truncated " + what + ": need " + n + " bytes, " + (end - at) + " left");
        }
    }

    private static int skip(int at, int n, int end, String what) {
        need(at, n, end, what);
        return at + n;
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
