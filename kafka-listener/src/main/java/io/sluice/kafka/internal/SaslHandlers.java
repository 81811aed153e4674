package io.sluice.kafka.internal;

import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.Errors;

import java.util.Arrays;
import java.util.List;

/**
 * SASL/PLAIN carrying the broker's token: SaslHandshake (v1: the SASL exchange then travels in SaslAuthenticate
 * frames) and SaslAuthenticate, whose bytes are PLAIN's {@code [authzid] NUL authcid NUL password}. The password is
 * compared with the broker's token in constant time (the binary and HTTP ports' authenticator); the user names are
 * not checked (one shared token, as on the other ports). A wrong password is answered SASL_AUTHENTICATION_FAILED and
 * the connection closed after the answer, as Kafka does. Without a token on the broker any PLAIN credentials are
 * accepted, so a client configured for SASL still connects.
 */
final class SaslHandlers {
    static final String PLAIN = "PLAIN";

    private SaslHandlers() {
    }

    static final class Handshake implements ApiHandler {
        @Override
        public void handle(KafkaRequest request) {
            SaslHandshakeRequestData data = request.data();
            SaslHandshakeResponseData response = new SaslHandshakeResponseData().setMechanisms(List.of(PLAIN));
            if (!PLAIN.equals(data.mechanism())) {
                response.setErrorCode(Errors.UNSUPPORTED_SASL_MECHANISM.code());
            }
            request.respond(response);
        }
    }

    static final class Authenticate implements ApiHandler {
        private final ListenerContext context;

        Authenticate(ListenerContext context) {
            this.context = context;
        }

        @Override
        public void handle(KafkaRequest request) {
            org.apache.kafka.common.message.SaslAuthenticateRequestData data = request.data();
            byte[] password = plainPassword(data.authBytes());
            boolean ok = !context.authRequired() || (password != null && context.tokenMatches(password));
            if (ok) {
                request.connection().authenticated();
                request.respond(new SaslAuthenticateResponseData().setAuthBytes(new byte[0]));
            } else {
                request.connection().closeAfter(request.sequence());
                context.counters().unauthenticatedCloses.increment();
                request.respond(new SaslAuthenticateResponseData()
                        .setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code())
                        .setErrorMessage("authentication failed: invalid credentials (the password is the broker's token)")
                        .setAuthBytes(new byte[0]));
            }
        }

        /** PLAIN's password: the bytes after the second NUL, or null when the message is not PLAIN's shape. */
        static byte[] plainPassword(byte[] message) {
            int first = indexOf(message, 0);
            int second = first < 0 ? -1 : indexOf(message, first + 1);
            if (second < 0 || indexOf(message, second + 1) >= 0) {
                return null;
            }
            return Arrays.copyOfRange(message, second + 1, message.length);
        }

        private static int indexOf(byte[] a, int from) {
            for (int i = from; i < a.length; i++) {
                if (a[i] == 0) {
                    return i;
                }
            }
            return -1;
        }
    }
}
