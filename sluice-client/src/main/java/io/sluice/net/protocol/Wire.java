package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

import java.nio.charset.StandardCharsets;

/**
 * The protocol's primitive types, all big-endian:
 * <pre>
 *   int8 | int16 | int32 | int64     fixed width, two's complement
 *   string  = int16 length, then that many UTF-8 bytes; length -1 means null
 *   bytes   = int32 length, then that many bytes; length -1 means null
 *   array   = int32 count, then count elements
 * </pre>
 * Readers check every length and count against the bytes left in the frame before allocating, so a hostile
 * length can never allocate more than the (bounded) frame already holds.
 */
public final class Wire {
    private Wire() {
    }

    public static void writeString(ByteBuf out, String s) {
        if (s == null) {
            out.writeShort(-1);
            return;
        }
        int lengthIndex = out.writerIndex();
        out.writeShort(0);
        int written = ByteBufUtil.writeUtf8(out, s);
        if (written > Short.MAX_VALUE) {
            throw new ProtocolException("string longer than " + Short.MAX_VALUE + " UTF-8 bytes");
        }
        out.setShort(lengthIndex, written);
    }

    public static String readString(ByteBuf in) {
        short length = readShort(in);
        if (length == -1) {
            return null;
        }
        if (length < 0) {
            throw new ProtocolException("negative string length " + length);
        }
        need(in, length, "string");
        String s = in.toString(in.readerIndex(), length, StandardCharsets.UTF_8);
        in.skipBytes(length);
        return s;
    }

    /** A string that must be present. */
    public static String readRequiredString(ByteBuf in, String field) {
        String s = readString(in);
        if (s == null) {
            throw new ProtocolException(field + " must not be null");
        }
        return s;
    }

    public static void writeBytes(ByteBuf out, byte[] b) {
        if (b == null) {
            out.writeInt(-1);
        } else {
            out.writeInt(b.length);
            out.writeBytes(b);
        }
    }

    public static byte[] readBytes(ByteBuf in) {
        int length = readInt(in);
        if (length == -1) {
            return null;
        }
        if (length < 0) {
            throw new ProtocolException("negative bytes length " + length);
        }
        need(in, length, "bytes");
        byte[] b = new byte[length];
        in.readBytes(b);
        return b;
    }

    /**
     * Reads an array count, checking that {@code count * minElementSize} bytes remain, so a hostile count cannot
     * make the reader allocate a huge array.
     */
    public static int readCount(ByteBuf in, int minElementSize, String what) {
        int count = readInt(in);
        if (count < 0) {
            throw new ProtocolException("negative " + what + " count " + count);
        }
        if ((long) count * minElementSize > in.readableBytes()) {
            throw new ProtocolException(what + " count " + count + " exceeds the frame");
        }
        return count;
    }

    public static byte readByte(ByteBuf in) {
        need(in, 1, "int8");
        return in.readByte();
    }

    public static short readShort(ByteBuf in) {
        need(in, 2, "int16");
        return in.readShort();
    }

    public static int readInt(ByteBuf in) {
        need(in, 4, "int32");
        return in.readInt();
    }

    public static long readLong(ByteBuf in) {
        need(in, 8, "int64");
        return in.readLong();
    }

    public static boolean readBoolean(ByteBuf in) {
        byte b = readByte(in);
        if (b != 0 && b != 1) {
            throw new ProtocolException("boolean must be 0 or 1, got " + b);
        }
        return b == 1;
    }

    /** Fails when bytes remain after a body was fully read: a sign of a mismatched layout. */
    public static void expectEnd(ByteBuf in, String what) {
        if (in.isReadable()) {
            throw new ProtocolException(in.readableBytes() + " unexpected trailing bytes after " + what);
        }
    }

    private static void need(ByteBuf in, int n, String what) {
        if (in.readableBytes() < n) {
            throw new ProtocolException("truncated " + what + ": need " + n + " bytes, " + in.readableBytes() + " left");
        }
    }
}
