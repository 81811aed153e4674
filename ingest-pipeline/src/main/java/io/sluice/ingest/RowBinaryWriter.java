package io.sluice.ingest;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Appends values in ClickHouse's RowBinary format: fixed-width numbers little-endian, strings as an unsigned
 * LEB128 length followed by the bytes, DateTime as UInt32 seconds, Date as UInt16 days, Nullable as a 0/1 byte
 * before the value. A growable byte buffer; one writer per batch (not thread-safe).
 *
 * <pre>
 *  String "abc":  | 0x03 | 'a' 'b' 'c' |
 *  UInt32 5:      | 05 00 00 00 |
 * </pre>
 */
public final class RowBinaryWriter {
    private byte[] buf;
    private int size;

    public RowBinaryWriter(int initialCapacity) {
        this.buf = new byte[Math.max(16, initialCapacity)];
    }

    public int size() {
        return size;
    }

    public byte[] array() {
        return buf;
    }

    public void reset() {
        size = 0;
    }

    private void ensure(int extra) {
        if (size + extra > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + extra));
        }
    }

    public RowBinaryWriter writeBytes(byte[] b, int off, int len) {
        ensure(len);
        System.arraycopy(b, off, buf, size, len);
        size += len;
        return this;
    }

    public RowBinaryWriter writeUInt8(int v) {
        ensure(1);
        buf[size++] = (byte) v;
        return this;
    }

    public RowBinaryWriter writeInt8(int v) {
        return writeUInt8(v);
    }

    public RowBinaryWriter writeBoolean(boolean v) {
        return writeUInt8(v ? 1 : 0);
    }

    public RowBinaryWriter writeUInt16(int v) {
        ensure(2);
        buf[size++] = (byte) v;
        buf[size++] = (byte) (v >>> 8);
        return this;
    }

    public RowBinaryWriter writeInt16(int v) {
        return writeUInt16(v);
    }

    public RowBinaryWriter writeUInt32(long v) {
        ensure(4);
        for (int i = 0; i < 4; i++) {
            buf[size++] = (byte) (v >>> (8 * i));
        }
        return this;
    }

    public RowBinaryWriter writeInt32(int v) {
        return writeUInt32(v);
    }

    public RowBinaryWriter writeUInt64(long v) {
        ensure(8);
        for (int i = 0; i < 8; i++) {
            buf[size++] = (byte) (v >>> (8 * i));
        }
        return this;
    }

    public RowBinaryWriter writeInt64(long v) {
        return writeUInt64(v);
    }

    public RowBinaryWriter writeFloat32(float v) {
        return writeUInt32(Float.floatToIntBits(v) & 0xFFFF_FFFFL);
    }

    public RowBinaryWriter writeFloat64(double v) {
        return writeUInt64(Double.doubleToLongBits(v));
    }

    /** DateTime: seconds since the epoch as UInt32. */
    public RowBinaryWriter writeDateTime(long epochSeconds) {
        return writeUInt32(epochSeconds);
    }

    /** Date: days since the epoch as UInt16. */
    public RowBinaryWriter writeDate(int epochDays) {
        return writeUInt16(epochDays);
    }

    public RowBinaryWriter writeVarUInt(long v) {
        ensure(10);
        while ((v & ~0x7FL) != 0) {
            buf[size++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[size++] = (byte) v;
        return this;
    }

    public RowBinaryWriter writeString(byte[] utf8) {
        return writeString(utf8, 0, utf8.length);
    }

    public RowBinaryWriter writeString(byte[] b, int off, int len) {
        writeVarUInt(len);
        return writeBytes(b, off, len);
    }

    public RowBinaryWriter writeString(String s) {
        return writeString(s.getBytes(StandardCharsets.UTF_8));
    }

    /** Nullable(T): writes the null marker; when it returns false the caller writes the value. */
    public boolean writeNullMarker(boolean isNull) {
        writeUInt8(isNull ? 1 : 0);
        return isNull;
    }
}
