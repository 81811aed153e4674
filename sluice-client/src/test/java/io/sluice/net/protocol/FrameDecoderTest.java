package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FrameDecoderTest {

    private static ByteBuf requestFrame(int bodyBytes) {
        ByteBuf b = Unpooled.buffer();
        int start = Frames.startRequest(b, ApiKey.API_VERSIONS, (short) 0, 42);
        b.writeZero(bodyBytes);
        Frames.finish(b, start);
        return b;
    }

    @Test
    void emitsNothingUntilTheWholeFrameArrivedEvenOneByteAtATime() {
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests(1024));
        ByteBuf frame = requestFrame(10);
        int total = frame.readableBytes();
        for (int i = 0; i < total - 1; i++) {
            ch.writeInbound(frame.retainedSlice(i, 1));
            assertThat(ch.<Object>readInbound()).isNull();
        }
        ch.writeInbound(frame.retainedSlice(total - 1, 1));
        ByteBuf decoded = ch.readInbound();
        assertThat(decoded.readableBytes()).isEqualTo(Frames.REQUEST_HEADER_SIZE + 10);
        assertThat(decoded.readShort()).isEqualTo(ApiKey.API_VERSIONS.id);
        decoded.release();
        frame.release();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void splitsSeveralFramesDeliveredInOneRead() {
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests(1024));
        ByteBuf all = Unpooled.wrappedBuffer(requestFrame(0), requestFrame(5), requestFrame(100));
        ch.writeInbound(all);
        int[] sizes = {8, 13, 108};
        for (int size : sizes) {
            ByteBuf f = ch.readInbound();
            assertThat(f.readableBytes()).isEqualTo(size);
            f.release();
        }
        assertThat(ch.<Object>readInbound()).isNull();
        ch.finishAndReleaseAll();
    }

    @Test
    void aLengthAboveTheMaximumFailsBeforeTheBodyIsBuffered() {
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests(1024));
        ByteBuf header = Unpooled.buffer().writeInt(Integer.MAX_VALUE).writeShort(0);
        assertThatThrownBy(() -> ch.writeInbound(header)).isInstanceOf(TooLongFrameException.class);
        ch.finishAndReleaseAll();
    }

    @Test
    void aNegativeLengthReadsAsAHugeUnsignedLengthAndIsRejected() {
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests(1024));
        assertThatThrownBy(() -> ch.writeInbound(Unpooled.buffer().writeInt(-5).writeLong(0)))
                .isInstanceOf(TooLongFrameException.class);
        ch.finishAndReleaseAll();
    }

    @Test
    void aFrameShorterThanItsHeaderIsACorruptedFrame() {
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests(1024));
        assertThatThrownBy(() -> ch.writeInbound(Unpooled.buffer().writeInt(3).writeMedium(7)))
                .isInstanceOf(CorruptedFrameException.class)
                .hasMessageContaining("shorter than");
        ch.finishAndReleaseAll();
    }

    @Test
    void aLowerLimitInForceRefusesALongerFrameFromItsLengthFieldAndCanBeLifted() {
        FrameDecoder decoder = FrameDecoder.forRequests(1 << 20);
        decoder.limit(256);
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        ByteBuf small = requestFrame(200);
        ch.writeInbound(small);
        ByteBuf f = ch.readInbound();
        assertThat(f.readableBytes()).isEqualTo(208);
        f.release();
        // 64 KiB announced, only its length field and header sent: refused at once, nothing of a body waited for
        ByteBuf header = Unpooled.buffer().writeInt(64 << 10).writeShort(ApiKey.PRODUCE.id).writeShort(0).writeInt(1);
        assertThatThrownBy(() -> ch.writeInbound(header))
                .isInstanceOf(FrameDecoder.LimitExceededException.class)
                .hasMessageContaining("65536").hasMessageContaining("256");
        ch.finishAndReleaseAll();

        FrameDecoder lifted = FrameDecoder.forRequests(1 << 20);
        lifted.limit(256);
        lifted.limit(Integer.MAX_VALUE); // capped at maxFrameSize
        assertThat(lifted.limit()).isEqualTo(1 << 20);
        EmbeddedChannel ok = new EmbeddedChannel(lifted);
        ok.writeInbound(requestFrame(64 << 10));
        ByteBuf big = ok.readInbound();
        assertThat(big.readableBytes()).isEqualTo(8 + (64 << 10));
        big.release();
        ok.finishAndReleaseAll();
    }
}
