package io.sluice.net.http.internal;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.cookie.Cookie;
import io.netty.handler.codec.http.cookie.CookieHeaderNames;
import io.netty.handler.codec.http.cookie.DefaultCookie;
import io.netty.handler.codec.http.cookie.ServerCookieDecoder;
import io.netty.handler.codec.http.cookie.ServerCookieEncoder;
import io.sluice.core.SluiceException;
import io.sluice.net.security.TokenAuthenticator;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.function.Consumer;

/**
 * {@code GET /ui}: a self-refreshing status page (plain HTML and JavaScript from the jar, no build step) showing
 * consumer groups with lag, ingest pipelines with state and lag, and topics with offsets. It reads the same
 * endpoints as any client, behind the same token: a browser cannot send a bearer header, so opening
 * {@code /ui?token=T} checks the token, sets it as an HttpOnly, SameSite=Strict session cookie and redirects to
 * {@code /ui} (the token leaves the address bar); requests carrying that cookie count as authenticated.
 */
final class StatusPage {
    static final String PATH = "/ui";
    static final String COOKIE = "sluice_token";
    private static final byte[] HTML = load();

    private StatusPage() {
    }

    private static byte[] load() {
        try (InputStream in = StatusPage.class.getResourceAsStream("/io/sluice/net/http/ui/index.html")) {
            if (in == null) {
                throw new IllegalStateException("io/sluice/net/http/ui/index.html missing from the jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static FullHttpResponse page(ByteBufAllocator alloc) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, Unpooled.wrappedBuffer(HTML));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/html; charset=utf-8");
        r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
        r.headers().set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'");
        return r;
    }

    /** {@code /ui?token=T}: a 303 to {@code /ui} with the session cookie, or 401 for a wrong token. */
    static void login(ByteBufAllocator alloc, TokenAuthenticator auth, String token, Consumer<FullHttpResponse> send) {
        if (auth != null && !auth.authenticate(token)) {
            send.accept(JsonResponses.error(alloc, HttpResponseStatus.UNAUTHORIZED, SluiceException.Code.AUTHENTICATION_FAILED,
                    "invalid token"));
            return;
        }
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.SEE_OTHER, Unpooled.EMPTY_BUFFER);
        r.headers().set(HttpHeaderNames.LOCATION, PATH);
        if (auth != null) {
            DefaultCookie cookie = new DefaultCookie(COOKIE, token);
            cookie.setHttpOnly(true);
            cookie.setPath("/");
            cookie.setSameSite(CookieHeaderNames.SameSite.Strict);
            r.headers().set(HttpHeaderNames.SET_COOKIE, ServerCookieEncoder.STRICT.encode(cookie));
        }
        send.accept(r);
    }

    /**
     * True when the request carries the token the status page's way: the session cookie, or {@code /ui?token=T}
     * with the right token (the login itself). Used by the connection's auth gate beside the bearer header.
     */
    static boolean authenticates(TokenAuthenticator auth, io.netty.handler.codec.http.HttpRequest request) {
        if (hasSessionCookie(auth, request)) {
            return true;
        }
        String uri = request.uri();
        if (!uri.startsWith(PATH + "?") || uri.length() > 8192) {
            return false;
        }
        try {
            java.util.List<String> token = new io.netty.handler.codec.http.QueryStringDecoder(uri).parameters().get("token");
            return token != null && token.size() == 1 && auth.authenticate(token.get(0));
        } catch (IllegalArgumentException malformed) {
            return false;
        }
    }

    static boolean hasSessionCookie(TokenAuthenticator auth, io.netty.handler.codec.http.HttpRequest request) {
        String header = request.headers().get(HttpHeaderNames.COOKIE);
        if (header == null || header.length() > 8192) {
            return false;
        }
        for (Cookie c : ServerCookieDecoder.STRICT.decode(header)) {
            if (c.name().equals(COOKIE) && auth.authenticate(c.value())) {
                return true;
            }
        }
        return false;
    }
}
