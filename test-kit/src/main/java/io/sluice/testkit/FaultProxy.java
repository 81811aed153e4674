package io.sluice.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * A TCP proxy in front of an HTTP/1.1 server (ClickHouse) that injects faults per request: a request can
 * <b>arrive late</b> (held for N ms, then forwarded even if the client gave up meanwhile — the server still
 * receives and executes it), its <b>response never comes</b> (the request is forwarded, the response is swallowed),
 * or its <b>connection is cut</b> before it is forwarded. Everything else passes through unchanged.
 *
 * <pre>{@code
 * try (FaultProxy proxy = FaultProxy.start("127.0.0.1", clickHousePort)) {
 *     proxy.onRequest(r -> r.isInsert() && r.sequence() % 3 == 0 ? Fault.delay(Duration.ofSeconds(2)) : Fault.PASS);
 *     ... point the client at proxy.url() ...
 * }
 * }</pre>
 *
 * <p>The proxy parses just enough HTTP to find request boundaries on keep-alive connections (request line and
 * headers, then {@code Content-Length} or chunked body) and never changes a byte. Bounds: at most
 * {@link #MAX_CONNECTIONS} client connections (more are closed at accept), request heads of at most 64 KiB and
 * bodies of at most {@link #MAX_REQUEST_BYTES} (a larger request cuts its connection). Two named threads per
 * connection plus one acceptor; {@link #close()} closes every socket and waits for every thread, and is safe to call
 * twice.
 */
public final class FaultProxy implements AutoCloseable {
    public static final int MAX_CONNECTIONS = 256;
    public static final int MAX_REQUEST_BYTES = 256 << 20;
    private static final int MAX_HEAD_BYTES = 64 << 10;

    /** What happens to one request. */
    public record Fault(Kind kind, long delayMillis) {
        public enum Kind { PASS, DELAY, DROP_RESPONSE, CUT }

        public static final Fault PASS = new Fault(Kind.PASS, 0);
        /** The response never reaches the client (the server executes the request). */
        public static final Fault DROP_RESPONSE = new Fault(Kind.DROP_RESPONSE, 0);
        /** The connection is closed at both ends before the request is forwarded: the server never sees it. */
        public static final Fault CUT = new Fault(Kind.CUT, 0);

        /** The request reaches the server {@code d} late, whether or not the client is still waiting. */
        public static Fault delay(Duration d) {
            return new Fault(Kind.DELAY, d.toMillis());
        }
    }

    /** A request as the proxy saw it, in arrival order over all connections. */
    public record Request(long sequence, String method, String target, String sql) {
        /** True for an {@code INSERT} statement (in the URL's {@code query} parameter or the body). */
        public boolean isInsert() {
            return sql.stripLeading().toUpperCase(Locale.ROOT).startsWith("INSERT");
        }

        /** True for an INSERT into {@code table} (a fully qualified name). */
        public boolean isInsertInto(String table) {
            return isInsert() && sql.toUpperCase(Locale.ROOT).startsWith("INSERT INTO " + table.toUpperCase(Locale.ROOT) + " ");
        }
    }

    private final String targetHost;
    private final int targetPort;
    private final ServerSocket listener;
    private final Thread acceptor;
    private final List<Thread> threads = new ArrayList<>();
    private final List<Socket> sockets = new ArrayList<>();
    private final CountDownLatch closed = new CountDownLatch(1);
    private final AtomicLong requests = new AtomicLong();
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicLong faultsInjected = new AtomicLong();
    private final AtomicInteger delayedPending = new AtomicInteger();
    private volatile Function<Request, Fault> rule = r -> Fault.PASS;

    private FaultProxy(String targetHost, int targetPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.acceptor = new Thread(this::accept, "fault-proxy-" + listener.getLocalPort() + "-accept");
        this.acceptor.setDaemon(true);
        this.acceptor.start();
    }

    /** Listens on a free loopback port and forwards to {@code host:port}. */
    public static FaultProxy start(String host, int port) {
        try {
            return new FaultProxy(host, port);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Forwards to the HTTP server at {@code url} ({@code http://host:port}). */
    public static FaultProxy forUrl(String url) {
        java.net.URI u = java.net.URI.create(url);
        return start(u.getHost(), u.getPort());
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** {@code http://127.0.0.1:<port>}. */
    public String url() {
        return "http://127.0.0.1:" + port();
    }

    /** Decides the fault of each following request; called on the connection's thread, must not block. */
    public void onRequest(Function<Request, Fault> rule) {
        this.rule = rule;
    }

    /** Requests seen so far. */
    public long requests() {
        return requests.get();
    }

    /** Delayed requests not yet forwarded to the server. */
    public int delayedPending() {
        return delayedPending.get();
    }

    /** Requests that got a fault other than {@link Fault#PASS}. */
    public long faultsInjected() {
        return faultsInjected.get();
    }

    private void accept() {
        while (closed.getCount() > 0) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            if (connections.incrementAndGet() > MAX_CONNECTIONS) {
                connections.decrementAndGet();
                closeQuietly(client);
                continue;
            }
            Socket server = new Socket();
            try {
                server.connect(new InetSocketAddress(targetHost, targetPort), 5_000);
            } catch (IOException e) {
                connections.decrementAndGet();
                closeQuietly(client);
                closeQuietly(server);
                continue;
            }
            Connection c = new Connection(client, server);
            synchronized (this) {
                if (closed.getCount() == 0) {
                    c.close();
                    return;
                }
                sockets.add(client);
                sockets.add(server);
                threads.removeIf(t -> !t.isAlive());
                Thread up = new Thread(c::pumpRequests, "fault-proxy-" + port() + "-up-" + client.getPort());
                Thread down = new Thread(c::pumpResponses, "fault-proxy-" + port() + "-down-" + client.getPort());
                up.setDaemon(true);
                down.setDaemon(true);
                threads.add(up);
                threads.add(down);
                up.start();
                down.start();
            }
        }
    }

    /** One client connection and its server connection. */
    private final class Connection {
        final Socket client;
        final Socket server;
        volatile boolean dropResponses;

        Connection(Socket client, Socket server) {
            this.client = client;
            this.server = server;
        }

        void pumpRequests() {
            try (InputStream in = client.getInputStream(); OutputStream out = server.getOutputStream()) {
                while (true) {
                    byte[] request = readRequest(in);
                    if (request == null) {
                        break;
                    }
                    Request r = describe(requests.incrementAndGet(), request);
                    Fault f = rule.apply(r);
                    if (f.kind() != Fault.Kind.PASS) {
                        faultsInjected.incrementAndGet();
                    }
                    switch (f.kind()) {
                        case CUT -> {
                            close();
                            return;
                        }
                        case DELAY -> {
                            delayedPending.incrementAndGet();
                            try {
                                if (closed.await(f.delayMillis(), TimeUnit.MILLISECONDS)) {
                                    return; // proxy closing
                                }
                                out.write(request);
                                out.flush();
                            } finally {
                                delayedPending.decrementAndGet();
                            }
                            continue;
                        }
                        case DROP_RESPONSE -> dropResponses = true;
                        case PASS -> { }
                    }
                    out.write(request);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // client left or proxy closing
            } finally {
                // the server still answers what it was sent (even to a client that left): pumpResponses drains
                // it and closes both sockets when the server closes its end
                try {
                    server.shutdownOutput();
                } catch (IOException ignored) {
                    // already closed
                }
            }
        }

        void pumpResponses() {
            byte[] buf = new byte[64 << 10];
            try (InputStream in = server.getInputStream()) {
                OutputStream out = client.getOutputStream();
                int n;
                while ((n = in.read(buf)) >= 0) {
                    if (dropResponses) {
                        continue;
                    }
                    try {
                        out.write(buf, 0, n);
                        out.flush();
                    } catch (IOException clientLeft) {
                        dropResponses = true; // keep reading so the server finishes the request
                    }
                }
            } catch (IOException e) {
                // server closed
            } finally {
                close();
                connections.decrementAndGet();
            }
        }

        /** Reads one whole request (head and body), or null at the end of the stream. */
        private byte[] readRequest(InputStream in) throws IOException {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            int matched = 0;
            while (matched < 4) {
                int b = in.read();
                if (b < 0) {
                    return null;
                }
                head.write(b);
                if (head.size() > MAX_HEAD_BYTES) {
                    throw new IOException("request head over " + MAX_HEAD_BYTES + " bytes");
                }
                matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
            }
            String text = head.toString(StandardCharsets.ISO_8859_1);
            long length = 0;
            boolean chunked = false;
            for (String line : text.split("\r\n")) {
                String l = line.toLowerCase(Locale.ROOT);
                if (l.startsWith("content-length:")) {
                    length = Long.parseLong(l.substring(15).trim());
                } else if (l.startsWith("transfer-encoding:") && l.contains("chunked")) {
                    chunked = true;
                }
            }
            ByteArrayOutputStream all = new ByteArrayOutputStream((int) Math.min(MAX_REQUEST_BYTES, head.size() + length));
            head.writeTo(all);
            if (chunked) {
                copyChunks(in, all);
            } else {
                if (length > MAX_REQUEST_BYTES) {
                    throw new IOException("request body over " + MAX_REQUEST_BYTES + " bytes");
                }
                copyExactly(in, all, length);
            }
            return all.toByteArray();
        }

        private void copyChunks(InputStream in, ByteArrayOutputStream all) throws IOException {
            while (true) {
                String sizeLine = readLine(in, all);
                int semi = sizeLine.indexOf(';');
                long size = Long.parseLong((semi >= 0 ? sizeLine.substring(0, semi) : sizeLine).trim(), 16);
                if (all.size() + size > MAX_REQUEST_BYTES) {
                    throw new IOException("request body over " + MAX_REQUEST_BYTES + " bytes");
                }
                copyExactly(in, all, size);
                if (size == 0) {
                    // trailers until an empty line
                    while (!readLine(in, all).isEmpty()) {
                        // skip
                    }
                    return;
                }
                readLine(in, all); // CRLF after the chunk
            }
        }

        private String readLine(InputStream in, ByteArrayOutputStream all) throws IOException {
            StringBuilder sb = new StringBuilder();
            int prev = -1;
            while (true) {
                int b = in.read();
                if (b < 0) {
                    throw new IOException("stream ended inside a chunked body");
                }
                all.write(b);
                if (prev == '\r' && b == '\n') {
                    sb.setLength(sb.length() - 1);
                    return sb.toString();
                }
                sb.append((char) b);
                if (sb.length() > 1024) {
                    throw new IOException("chunk line over 1024 bytes");
                }
                prev = b;
            }
        }

        private void copyExactly(InputStream in, ByteArrayOutputStream all, long n) throws IOException {
            byte[] buf = new byte[64 << 10];
            long left = n;
            while (left > 0) {
                int r = in.read(buf, 0, (int) Math.min(buf.length, left));
                if (r < 0) {
                    throw new IOException("stream ended inside a request body");
                }
                all.write(buf, 0, r);
                left -= r;
            }
        }

        void close() {
            closeQuietly(client);
            closeQuietly(server);
        }
    }

    private static Request describe(long sequence, byte[] request) {
        String text = new String(request, StandardCharsets.ISO_8859_1);
        int lineEnd = text.indexOf("\r\n");
        String[] line = text.substring(0, lineEnd).split(" ");
        String method = line[0];
        String target = line.length > 1 ? line[1] : "";
        String sql = null;
        int q = target.indexOf('?');
        if (q >= 0) {
            for (String param : target.substring(q + 1).split("&")) {
                if (param.startsWith("query=")) {
                    sql = URLDecoder.decode(param.substring(6), StandardCharsets.UTF_8);
                }
            }
        }
        if (sql == null) {
            int bodyStart = text.indexOf("\r\n\r\n") + 4;
            sql = new String(request, bodyStart, Math.min(4096, request.length - bodyStart), StandardCharsets.UTF_8);
        }
        return new Request(sequence, method, target, sql);
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public void close() {
        List<Thread> toJoin;
        synchronized (this) {
            if (closed.getCount() == 0) {
                return;
            }
            closed.countDown();
            try {
                listener.close();
            } catch (IOException ignored) {
                // closing
            }
            sockets.forEach(FaultProxy::closeQuietly);
            toJoin = new ArrayList<>(threads);
        }
        toJoin.add(acceptor);
        for (Thread t : toJoin) {
            try {
                t.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
