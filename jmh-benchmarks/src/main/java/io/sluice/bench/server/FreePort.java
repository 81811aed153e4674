package io.sluice.bench.server;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** A free TCP port on 127.0.0.1 (bound then released: a private server binds it right after). */
final class FreePort {
    private FreePort() {
    }

    static int next() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        }
    }

    /** True once something accepts connections on the port. */
    static boolean accepting(int port) {
        try (java.net.Socket s = new java.net.Socket()) {
            s.connect(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
