package io.sluice.net.internal;

import java.net.InetSocketAddress;

/** Parses {@code host:port} (IPv6 as {@code [::1]:7070}) into an unresolved-until-connect socket address. */
public final class HostPort {
    private HostPort() {
    }

    public static InetSocketAddress parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("expected HOST:PORT, got '" + text + "'");
        }
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new IllegalArgumentException("expected HOST:PORT, got '" + text + "'");
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("port in '" + text + "' is not a number", e);
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port in '" + text + "' must be between 1 and 65535");
        }
        return InetSocketAddress.createUnresolved(host, port);
    }
}
