package io.sluice.testkit;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy in front of a ZooKeeper that reads the client's requests frame by frame and can cut the connection
 * at a chosen {@code multi} request, without forwarding it: the client then sees a connection loss for a
 * transaction that was never applied. That is how ClickHouse's "unknown status" INSERT is produced on purpose: its
 * commit of a part is one {@code multi}; losing ZooKeeper there leaves the part on the replica, visible, but not
 * registered (code 319 to the client).
 *
 * <pre>
 *   client -> server frame:  int32 length | (first frame: connect request) | int32 xid | int32 type | body
 *   type 14 = multi
 * </pre>
 *
 * Responses are copied back unchanged. Thread-safety: {@link #cutMulti(int)} may be called from any thread; one
 * named thread accepts, two per connection copy.
 */
public final class ZooKeeperProxy implements AutoCloseable {
    private static final int MULTI = 14;

    private final int target;
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicInteger multisToPass = new AtomicInteger(-1);
    private final AtomicInteger cuts = new AtomicInteger();
    private final AtomicInteger multisSeen = new AtomicInteger();
    private final Thread acceptor;
    private volatile boolean open = true;

    public ZooKeeperProxy(int targetPort) {
        this.target = targetPort;
        try {
            this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.acceptor = new Thread(this::accept, "zookeeper-proxy-accept");
        this.acceptor.setDaemon(true);
        this.acceptor.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    /** Lets {@code pass} more multi requests through, then cuts the connection at the next one (once). */
    public void cutMulti(int pass) {
        multisToPass.set(pass);
    }

    /**
     * Cuts the connection at the next multi request whose bytes contain {@code path} (once), for example a
     * ReplicatedMergeTree replica's {@code <zookeeper_path>/replicas/<replica>/parts/}: the multi that commits a part.
     */
    public void cutMultiWriting(String path) {
        cutMarker = path.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    private volatile byte[] cutMarker;

    private boolean markedCut(byte[] frame) {
        byte[] m = cutMarker;
        if (m == null || indexOf(frame, m) < 0) {
            return false;
        }
        cutMarker = null;
        return true;
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** Connections cut at a multi so far. */
    public int cuts() {
        return cuts.get();
    }

    /** Multi requests seen from clients so far. */
    public int multisSeen() {
        return multisSeen.get();
    }

    private void accept() {
        while (open) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
                sockets.add(client);
                sockets.add(upstream);
                Thread up = new Thread(() -> requests(client, upstream), "zookeeper-proxy-requests");
                Thread down = new Thread(() -> copy(upstream, client), "zookeeper-proxy-responses");
                up.setDaemon(true);
                down.setDaemon(true);
                up.start();
                down.start();
            } catch (IOException e) {
                if (open) {
                    continue;
                }
                return;
            }
        }
    }

    private void requests(Socket client, Socket upstream) {
        try (DataInputStream in = new DataInputStream(client.getInputStream())) {
            OutputStream out = upstream.getOutputStream();
            boolean first = true;
            while (true) {
                int length = in.readInt();
                byte[] frame = new byte[length];
                in.readFully(frame);
                if (!first && length >= 8) {
                    int type = ((frame[4] & 0xff) << 24) | ((frame[5] & 0xff) << 16) | ((frame[6] & 0xff) << 8) | (frame[7] & 0xff);
                    if (type == MULTI) {
                        multisSeen.incrementAndGet();
                        if (armedCut() || markedCut(frame)) {
                            cuts.incrementAndGet();
                            close(client, upstream);
                            return;
                        }
                    }
                }
                first = false;
                byte[] header = {(byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8), (byte) length};
                out.write(header);
                out.write(frame);
                out.flush();
            }
        } catch (IOException e) {
            close(client, upstream);
        }
    }

    /** True once when the multi seen now is the one to cut. */
    private boolean armedCut() {
        while (true) {
            int n = multisToPass.get();
            if (n < 0) {
                return false;
            }
            if (multisToPass.compareAndSet(n, n - 1)) {
                return n == 0;
            }
        }
    }

    private static void copy(Socket from, Socket to) {
        try (InputStream in = from.getInputStream()) {
            OutputStream out = to.getOutputStream();
            byte[] buf = new byte[16 << 10];
            int n;
            while ((n = in.read(buf)) >= 0) {
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // one side closed: close both below
        }
        close(from, to);
    }

    private static void close(Socket a, Socket b) {
        try {
            a.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        try {
            b.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        open = false;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }
}
