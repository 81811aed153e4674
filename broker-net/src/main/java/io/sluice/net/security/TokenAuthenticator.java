package io.sluice.net.security;

import io.sluice.core.SluiceException.InvalidConfigException;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Optional;

/**
 * Shared-token authentication for the HTTP API ({@code Authorization: Bearer <token>}) and the binary protocol's
 * authentication handshake. Thread-safe and immutable.
 *
 * <p>Only the SHA-256 digest of the token is kept, never the token itself, and a presented token is compared by
 * digesting it and comparing the two digests with {@link MessageDigest#isEqual} (constant time): the comparison
 * takes the same time whatever the presented token's length or the position of its first wrong byte. The
 * token never appears in {@link #toString()}, logs or metrics.
 */
public final class TokenAuthenticator {

    /** Shortest accepted token, in characters: short shared secrets are guessable. */
    public static final int MIN_TOKEN_LENGTH = 16;
    /** Longest accepted token, in characters (an HTTP header line has to carry it). */
    public static final int MAX_TOKEN_LENGTH = 4096;
    /** The environment variable {@code bin/sluice} and the Docker image read the token from. */
    public static final String DEFAULT_ENV_VARIABLE = "SLUICE_AUTH_TOKEN";

    private static final String BEARER = "Bearer ";

    private final byte[] digest;

    private TokenAuthenticator(byte[] digest) {
        this.digest = digest;
    }

    /**
     * @throws InvalidConfigException if the token is shorter than {@link #MIN_TOKEN_LENGTH}, longer than
     *                                {@link #MAX_TOKEN_LENGTH} or contains whitespace or control characters
     *                                (the message never contains the token)
     */
    public static TokenAuthenticator of(CharSequence token) {
        if (token == null || token.length() < MIN_TOKEN_LENGTH || token.length() > MAX_TOKEN_LENGTH) {
            throw InvalidConfigException.of("auth token length", token == null ? null : token.length(),
                    "must be between " + MIN_TOKEN_LENGTH + " and " + MAX_TOKEN_LENGTH + " characters");
        }
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c <= ' ' || c == 0x7f) {
                throw InvalidConfigException.of("auth token", "<redacted>",
                        "must not contain whitespace or control characters (found one at index " + i + ")");
            }
        }
        return new TokenAuthenticator(sha256(token));
    }

    /**
     * The authenticator for the token in environment variable {@code variable}, or empty when the variable is
     * unset or blank (authentication off).
     */
    public static Optional<TokenAuthenticator> fromEnvironment(String variable) {
        String value = System.getenv(variable);
        return value == null || value.isBlank() ? Optional.empty() : Optional.of(of(value.strip()));
    }

    /** True if {@code presented} is the shared token. Null is refused. */
    public boolean authenticate(CharSequence presented) {
        if (presented == null || presented.length() > MAX_TOKEN_LENGTH) {
            return false;
        }
        return MessageDigest.isEqual(digest, sha256(presented));
    }

    /** True if the UTF-8 bytes {@code presented} are the shared token (for the binary handshake). */
    public boolean authenticate(byte[] presented) {
        if (presented == null || presented.length > MAX_TOKEN_LENGTH * 4) {
            return false;
        }
        return MessageDigest.isEqual(digest, newSha256().digest(presented));
    }

    /** True if an HTTP {@code Authorization} header value is {@code Bearer <the token>}. */
    public boolean authenticateBearer(String authorizationHeader) {
        if (authorizationHeader == null || authorizationHeader.length() <= BEARER.length()
                || !authorizationHeader.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return false;
        }
        return authenticate(authorizationHeader.substring(BEARER.length()).strip());
    }

    @Override
    public String toString() {
        return "TokenAuthenticator[token=<redacted>]";
    }

    private static byte[] sha256(CharSequence text) {
        ByteBuffer utf8 = StandardCharsets.UTF_8.encode(CharBuffer.wrap(text));
        MessageDigest md = newSha256();
        md.update(utf8);
        if (utf8.hasArray()) {
            Arrays.fill(utf8.array(), (byte) 0); // do not leave a plaintext copy behind
        }
        return md.digest();
    }

    private static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
