package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.sluice.core.SluiceException;

/**
 * Frame headers. Every frame is {@code int32 length} + frame bytes; the frame starts with a fixed header.
 * <pre>
 * request frame:
 *  0        4        6        8               12
 *  +--------+--------+--------+---------------+------------------+
 *  | length | apiKey | version| correlationId | request body ... |
 *  | int32  | int16  | int16  | int32         |                  |
 *  +--------+--------+--------+---------------+------------------+
 *
 * response frame:
 *  0        4               8           10
 *  +--------+---------------+-----------+-------------------------------------------+
 *  | length | correlationId | errorCode | errorCode == 0: response body             |
 *  | int32  | int32         | int16     | errorCode != 0: string message            |
 *  +--------+---------------+-----------+-------------------------------------------+
 * </pre>
 * {@code length} counts the bytes after itself. Responses come back in request order on each connection and
 * echo the request's correlation id. Error codes are {@link SluiceException.Code} ids.
 */
public final class Frames {
    public static final int LENGTH_FIELD_SIZE = 4;
    public static final int REQUEST_HEADER_SIZE = 8;
    public static final int RESPONSE_HEADER_SIZE = 6;
    /** The default and largest sensible frame: big enough for a 1 MiB record plus its batch framing. */
    public static final int DEFAULT_MAX_FRAME_SIZE = 16 << 20;

    private Frames() {
    }

    /** Writes a request header with a length placeholder; returns the frame's start index for {@link #finish}. */
    public static int startRequest(ByteBuf out, ApiKey api, short version, int correlationId) {
        int start = out.writerIndex();
        out.writeInt(0);
        out.writeShort(api.id);
        out.writeShort(version);
        out.writeInt(correlationId);
        return start;
    }

    /** Writes a success response header with a length placeholder; returns the frame's start index. */
    public static int startResponse(ByteBuf out, int correlationId) {
        int start = out.writerIndex();
        out.writeInt(0);
        out.writeInt(correlationId);
        out.writeShort(SluiceException.Code.NONE.id);
        return start;
    }

    /** Writes a complete error response. */
    public static void writeError(ByteBuf out, int correlationId, SluiceException.Code code, String message) {
        int start = out.writerIndex();
        out.writeInt(0);
        out.writeInt(correlationId);
        out.writeShort(code.id);
        Wire.writeString(out, truncate(message));
        finish(out, start);
    }

    /** Patches the length field of the frame that starts at {@code start}. */
    public static void finish(ByteBuf out, int start) {
        out.setInt(start, out.writerIndex() - start - LENGTH_FIELD_SIZE);
    }

    private static String truncate(String message) {
        if (message == null) {
            return "";
        }
        return message.length() > 1000 ? message.substring(0, 1000) + "..." : message;
    }
}
