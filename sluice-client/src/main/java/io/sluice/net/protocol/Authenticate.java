package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;

/**
 * AUTHENTICATE: presents the shared token when the server requires one. Until a connection authenticated, every
 * API except API_VERSIONS and AUTHENTICATE answers {@code AUTHENTICATION_FAILED}. A wrong token answers
 * {@code AUTHENTICATION_FAILED} and the server closes the connection after writing the answer.
 * <pre>
 * request:  token string
 * response: (empty)
 * </pre>
 */
public final class Authenticate {
    private Authenticate() {
    }

    public record Request(String token) {
        public void encode(ByteBuf out) {
            Wire.writeString(out, token);
        }

        public static Request decode(ByteBuf in) {
            Request r = new Request(Wire.readRequiredString(in, "token"));
            Wire.expectEnd(in, "authenticate request");
            return r;
        }

        /** Never prints the token. */
        @Override
        public String toString() {
            return "Authenticate.Request[token=***]";
        }
    }
}
