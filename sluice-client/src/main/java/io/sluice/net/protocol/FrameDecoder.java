package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;

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
 *
 * <p>A lower limit can be in force for a while ({@link #limit(int)}): the server applies a small one until the
 * connection authenticated. It is checked as soon as the length field arrives, so a peer announcing a larger frame
 * is refused ({@link LimitExceededException}) before a byte of its body is buffered. Netty's cumulation grows with the
 * bytes received and never reserves the announced length up front.
 */
public final class FrameDecoder extends LengthFieldBasedFrameDecoder {
    private final int minFrameSize;
    /** System.nanoTime() since which a partial frame waits for its remaining bytes; 0 when none is pending. */
    private long partialSinceNanos;
    private final int maxFrameSize;
    /** The largest length accepted now: {@code maxFrameSize}, or lower until {@link #limit(int)} lifts it. */
    private int limit;

    /**
     * @param maxFrameSize largest accepted value of the length field
     * @param minFrameSize smallest accepted value (the fixed header: 8 for requests, 6 for responses)
     */
    public FrameDecoder(int maxFrameSize, int minFrameSize) {
        super(maxFrameSize + Frames.LENGTH_FIELD_SIZE, 0, Frames.LENGTH_FIELD_SIZE, 0, Frames.LENGTH_FIELD_SIZE, true);
        this.minFrameSize = minFrameSize;
        this.maxFrameSize = maxFrameSize;
        this.limit = maxFrameSize;
    }

    /**
     * Sets the largest frame accepted from now on, capped at {@code maxFrameSize} (for example a small one until a
     * connection authenticated, then {@code maxFrameSize} again). Event loop only.
     */
    public void limit(int bytes) {
        this.limit = Math.min(bytes, maxFrameSize);
    }

    /** The largest frame accepted now. */
    public int limit() {
        return limit;
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
        if (limit < maxFrameSize && in.readableBytes() >= Frames.LENGTH_FIELD_SIZE) {
            long length = in.getUnsignedInt(in.readerIndex());
            if (length > limit) {
                in.skipBytes(in.readableBytes());
                throw new LimitExceededException(length, limit);
            }
        }
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

    /** A frame longer than the limit in force (lower than {@code maxFrameSize}), refused from its length field. */
    public static final class LimitExceededException extends TooLongFrameException {
        private final long length;
        private final int limit;

        LimitExceededException(long length, int limit) {
            super("frame of " + length + " bytes exceeds the current limit of " + limit + " bytes");
            this.length = length;
            this.limit = limit;
        }

        public long length() {
            return length;
        }

        public int limit() {
            return limit;
        }
    }
}
