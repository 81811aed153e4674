package io.sluice.bench.baseline;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * The raw network baseline: a plain-socket echo server on 127.0.0.1 (one thread per connection) and a blocking
 * client. A request is a 4-byte big-endian length and that many bytes; the reply is the same frame. This is the
 * floor any request/response protocol on this loopback pays: two syscalls each side and two TCP hops.
 */
public final class LoopbackEcho implements AutoCloseable {
    private final ServerSocket server;
    private final Thread acceptor;
    private final List<Socket> accepted = new ArrayList<>();

    public LoopbackEcho() throws IOException {
        server = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
        acceptor = new Thread(this::acceptLoop, "echo-acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                s.setTcpNoDelay(true);
                synchronized (accepted) {
                    accepted.add(s);
                }
                Thread t = new Thread(() -> echo(s), "echo-" + s.getPort());
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return; // server closed
            }
        }
    }

    private static void echo(Socket s) {
        try (s; DataInputStream in = new DataInputStream(s.getInputStream());
             DataOutputStream out = new DataOutputStream(s.getOutputStream())) {
            byte[] buf = new byte[64 * 1024];
            while (true) {
                int len = in.readInt();
                in.readFully(buf, 0, len);
                out.writeInt(len);
                out.write(buf, 0, len);
                out.flush();
            }
        } catch (EOFException e) {
            // client closed: normal end
        } catch (IOException e) {
            // connection reset by a closing client: normal end for a benchmark echo
        }
    }

    /** A blocking client connection; one thread uses it. */
    public Client connect() throws IOException {
        return new Client(port());
    }

    public static final class Client implements AutoCloseable {
        private final Socket socket;
        private final DataInputStream in;
        private final DataOutputStream out;
        private final byte[] reply = new byte[64 * 1024];

        Client(int port) throws IOException {
            socket = new Socket(InetAddress.getLoopbackAddress(), port);
            socket.setTcpNoDelay(true);
            in = new DataInputStream(new java.io.BufferedInputStream(socket.getInputStream()));
            out = new DataOutputStream(new java.io.BufferedOutputStream(socket.getOutputStream()));
        }

        /** One round trip. */
        public void roundTrip(byte[] payload) throws IOException {
            out.writeInt(payload.length);
            out.write(payload);
            out.flush();
            int len = in.readInt();
            in.readFully(reply, 0, len);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        server.close();
        synchronized (accepted) {
            for (Socket s : accepted) {
                s.close();
            }
        }
        acceptor.join(5_000);
    }
}
