package io.sluice.bench.baseline;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
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
 * client. Both sides buffer and flush once per frame, so this is the floor any request/response protocol on this
 * loopback pays: one write and one read syscall each side and two TCP hops.
 *
 * <pre>
 *   request:  int length (big-endian) | int replyLength | length bytes
 *   reply:    int replyLength         | replyLength bytes (the request's bytes, then whatever the buffer holds)
 * </pre>
 *
 * {@link Client#roundTrip} asks for its own bytes back (a produce-sized echo); {@link Client#fetch} sends a small
 * request and gets a large reply (a fetch-sized echo: the floor of a fetch that returns that many bytes).
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

    /** The largest request or reply (both sides' buffers). */
    public static final int MAX_FRAME = 64 * 1024;

    private static void echo(Socket s) {
        // Both directions buffered: the reply leaves in one write (one syscall, one TCP segment), as the
        // client's request does and as Netty's flush of a whole frame does. Unbuffered, DataOutputStream
        // would issue a syscall and a segment per field and make the floor look higher than it is.
        try (s; DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 64 * 1024));
             DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), 64 * 1024))) {
            byte[] buf = new byte[MAX_FRAME];
            while (true) {
                int len = in.readInt();
                int replyLength = in.readInt();
                in.readFully(buf, 0, len);
                out.writeInt(replyLength);
                out.write(buf, 0, replyLength);
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
        private final byte[] reply = new byte[MAX_FRAME];

        Client(int port) throws IOException {
            socket = new Socket(InetAddress.getLoopbackAddress(), port);
            socket.setTcpNoDelay(true);
            in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 64 * 1024));
            out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream(), 64 * 1024));
        }

        /** One round trip that echoes {@code payload}. */
        public void roundTrip(byte[] payload) throws IOException {
            exchange(payload, payload.length);
        }

        /** One round trip: sends {@code request}, receives {@code replyLength} bytes (≤ {@link #MAX_FRAME}). */
        public void fetch(byte[] request, int replyLength) throws IOException {
            exchange(request, replyLength);
        }

        private void exchange(byte[] request, int replyLength) throws IOException {
            if (request.length > MAX_FRAME || replyLength < 0 || replyLength > MAX_FRAME) {
                throw new IllegalArgumentException("request " + request.length + " B / reply " + replyLength
                        + " B: at most " + MAX_FRAME + " B each");
            }
            out.writeInt(request.length);
            out.writeInt(replyLength);
            out.write(request);
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
