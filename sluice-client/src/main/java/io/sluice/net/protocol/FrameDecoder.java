package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;

/**
 * Splits the byte stream into frames, each a big-endian int32 length followed by that many bytes:
 * <pre>
 * +--------+----------------------------+
 * | length |  frame (length bytes)      |    decoded output: the frame, without the length field
 * | int32  |                            |
 * +--------+----------------------------+
 * </pre>
 * Emits nothing until a whole frame has arrived. A length above {@code maxFrameSize} fails fast with Netty's
 * {@code TooLongFrameException} (before the body is buffered, so an attacker cannot make it allocate); a negative
 * length reads as an unsigned value above the maximum (so also {@code TooLongFrameException}); a length shorter than
 * the fixed header fails with {@code CorruptedFrameException}. Either way the stream
 * has lost its framing and the connection must be closed.
 */
public final class FrameDecoder extends LengthFieldBasedFrameDecoder {
    private final int minFrameSize;
    /** System.nanoTime() since which a partial frame waits for its remaining bytes; 0 when none is pending. */
    private long partialSinceNanos;

    /**
     * @param maxFrameSize largest accepted value of the length field
     * @param minFrameSize smallest accepted value (the fixed header: 8 for requests, 6 for responses)
     */
    public FrameDecoder(int maxFrameSize, int minFrameSize) {
        super(maxFrameSize + Frames.LENGTH_FIELD_SIZE, 0, Frames.LENGTH_FIELD_SIZE, 0, Frames.LENGTH_FIELD_SIZE, true);
        this.minFrameSize = minFrameSize;
    }

    public static FrameDecoder forRequests(int maxFrameSize) {
        return new FrameDecoder(maxFrameSize, Frames.REQUEST_HEADER_SIZE);
    }

    public static FrameDecoder forResponses(int maxFrameSize) {
        return new FrameDecoder(maxFrameSize, Frames.RESPONSE_HEADER_SIZE);
    }

    /**
     * How long the oldest incomplete frame has been waiting for the rest of its bytes, in nanoseconds (0 when no
     * partial frame is buffered). Lets the server close slow-drip clients that hold a buffer open.
     */
    public long partialFrameAgeNanos(long nowNanos) {
        return partialSinceNanos == 0 ? 0 : nowNanos - partialSinceNanos;
    }

    @Override
    protected Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        Object frame = super.decode(ctx, in);
        if (frame != null || !in.isReadable()) {
            partialSinceNanos = in.isReadable() ? System.nanoTime() : 0;
        } else if (partialSinceNanos == 0) {
            partialSinceNanos = System.nanoTime();
        }
        if (frame instanceof ByteBuf buf && buf.readableBytes() < minFrameSize) {
            int size = buf.readableBytes();
            buf.release();
            throw new CorruptedFrameException("frame of " + size + " bytes is shorter than its " + minFrameSize + "-byte header");
        }
        return frame;
    }
}
