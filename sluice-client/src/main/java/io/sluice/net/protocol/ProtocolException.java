package io.sluice.net.protocol;

/**
 * A frame whose body does not follow its API's layout (a length past the end of the frame, a negative count,
 * an unknown enum value). The frame boundary itself is intact, so the server answers {@code INVALID_REQUEST} and
 * keeps the connection; a broken frame boundary is a Netty {@code CorruptedFrameException} instead.
 */
public final class ProtocolException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ProtocolException(String message) {
        super(message);
    }
}
