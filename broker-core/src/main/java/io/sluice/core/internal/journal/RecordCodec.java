package io.sluice.core.internal.journal;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.Header;
import io.sluice.core.internal.bus.RingSlot;
import net.openhft.chronicle.bytes.Bytes;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The layout of one event in a journal excerpt (one Chronicle document per event, little-endian):
 *
 * <pre>
 *  0        8        16       20          20+k   22+k
 *  +--------+--------+--------+-----------+------+------------------------------+--------+-------+
 *  | offset |  time  | keyLen | key bytes | hdrs | hdrs × (kLen:i16 k vLen:i32 v)| valLen | value |
 *  |  i64   |  i64   |  i32   | (-1: null)|  i16 |                              |  i32   |       |
 *  +--------+--------+--------+-----------+------+------------------------------+--------+-------+
 * </pre>
 *
 * The dense offset is stored in the record so that recovery and index mapping never trust anything but the data.
 */
public final class RecordCodec {
    /** Fixed bytes per record besides key, value and headers. */
    public static final int OVERHEAD = 8 + 8 + 4 + 2 + 4;

    private RecordCodec() {
    }

    static void write(Bytes<?> out, long offset, RingSlot slot) {
        out.writeLong(offset);
        out.writeLong(slot.timestamp());
        int keyLength = slot.keyLength();
        out.writeInt(keyLength);
        if (keyLength > 0) {
            out.write(slot.keyBuffer(), 0, keyLength);
        }
        List<Header> headers = slot.headers();
        out.writeShort((short) headers.size());
        for (Header h : headers) {
            byte[] k = h.key().getBytes(StandardCharsets.UTF_8);
            out.writeShort((short) k.length);
            out.write(k);
            out.writeInt(h.value().length);
            out.write(h.value());
        }
        out.writeInt(slot.valueLength());
        out.write(slot.valueBuffer(), 0, slot.valueLength());
    }

    static long readOffset(Bytes<?> in) {
        return in.readLong(in.readPosition());
    }

    static long readTimestamp(Bytes<?> in) {
        return in.readLong(in.readPosition() + 8);
    }

    static ConsumerRecord read(Bytes<?> in, String topic, int partition) {
        long offset = in.readLong();
        long timestamp = in.readLong();
        int keyLength = in.readInt();
        byte[] key = null;
        if (keyLength >= 0) {
            key = new byte[keyLength];
            in.read(key);
        }
        int headerCount = in.readShort();
        List<Header> headers = List.of();
        if (headerCount > 0) {
            headers = new ArrayList<>(headerCount);
            for (int i = 0; i < headerCount; i++) {
                byte[] k = new byte[in.readShort()];
                in.read(k);
                byte[] v = new byte[in.readInt()];
                in.read(v);
                headers.add(new Header(new String(k, StandardCharsets.UTF_8), v));
            }
        }
        byte[] value = new byte[in.readInt()];
        in.read(value);
        return new ConsumerRecord(topic, partition, offset, timestamp, key, value, headers);
    }
}
