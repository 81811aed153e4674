package io.sluice.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A Redis for tests. By default a private {@code redis-server} on a free loopback port with its data (AOF,
 * fsync every second) in a temporary directory, shared by every test of the JVM ({@link #shared()}) and stopped
 * at JVM exit. {@link #restart()} keeps port and data, so "Redis restarted" tests see the same streams.
 * With {@code SLUICE_REDIS_URL=redis://host:port} set, an existing server is used instead.
 */
public final class RedisServer extends ServerHandle implements AutoCloseable {
    private static final String[] BINARIES = {"redis-server", "/usr/bin/redis-server"};

    private static RedisServer shared;

    private final String url;

    private RedisServer(String url, Process process) {
        super(process, "SLUICE_REDIS_URL");
        this.url = url;
    }

    public static synchronized RedisServer shared() {
        if (shared == null) {
            String external = System.getenv("SLUICE_REDIS_URL");
            if (external != null && !external.isBlank()) {
                shared = new RedisServer(external, null);
            } else {
                Process p = new Process();
                p.start();
                shared = new RedisServer("redis://127.0.0.1:" + p.port, p);
            }
        }
        return shared;
    }

    /** True if a redis-server binary is installed (a private server can be started). */
    public static boolean isInstalled() {
        return ServerProcess.isInstalled(BINARIES);
    }

    /**
     * A private server of its own (not the shared one), with its directory under {@code parent}; {@link #close()}
     * stops it and deletes its directory. The benchmarks use this without persistence.
     *
     * @param persistent true: AOF with fsync every second, as {@link #shared()}; false: nothing written to disk
     */
    public static RedisServer startPrivate(java.nio.file.Path parent, boolean persistent) {
        Process p = new Process(parent, persistent);
        p.start();
        return new RedisServer("redis://127.0.0.1:" + p.port, p);
    }

    /** Stops a server from {@link #startPrivate} and deletes its directory; the shared server is left running. */
    @Override
    public void close() {
        if (this != shared) {
            closeProcess();
        }
    }

    /** e.g. {@code redis://127.0.0.1:41235} */
    public String url() {
        return url;
    }


    /** True when a Redis on {@code 127.0.0.1:port} answers {@code PING} with {@code +PONG} (a readiness probe). */
    static boolean answersPing(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            s.setSoTimeout(2000);
            s.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            byte[] buf = new byte[7];
            int n = s.getInputStream().read(buf);
            return n > 0 && new String(buf, 0, n, StandardCharsets.US_ASCII).startsWith("+PONG");
        } catch (IOException e) {
            return false;
        }
    }

    /** Sends one command over a plain socket (RESP) and returns the raw reply line; for test setup only. */
    public String command(String... args) {
        URI u = URI.create(url);
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(u.getHost(), u.getPort()), 2000);
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            StringBuilder sb = new StringBuilder("*").append(args.length).append("\r\n");
            for (String a : args) {
                byte[] b = a.getBytes(StandardCharsets.UTF_8);
                sb.append('$').append(b.length).append("\r\n").append(a).append("\r\n");
            }
            out.write(sb.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = s.getInputStream();
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = in.read()) != -1 && c != '\n') {
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        } catch (IOException e) {
            throw new UncheckedIOException("Redis at " + url + " unreachable", e);
        }
    }

    /** Integer reply of a command such as {@code XLEN key}. */
    public long commandLong(String... args) {
        String reply = command(args);
        if (!reply.startsWith(":")) {
            throw new IllegalStateException("unexpected reply to " + List.of(args) + ": " + reply);
        }
        return Long.parseLong(reply.substring(1));
    }

    static final class Process extends ServerProcess {
        final int port = freePort();
        private final boolean persistent;

        Process() {
            this(null, true);
        }

        Process(java.nio.file.Path parent, boolean persistent) {
            super("redis", parent);
            this.persistent = persistent;
        }

        @Override
        protected List<String> command() {
            String bin = findBinary(BINARIES).toString();
            return List.of(bin, "--port", Integer.toString(port), "--bind", "127.0.0.1", "--dir", dir.toAbsolutePath().toString(),
                    "--save", "", "--appendonly", persistent ? "yes" : "no", "--appendfsync", "everysec", "--daemonize", "no",
                    "--protected-mode", "yes", "--logfile", dir.resolve("redis.log").toAbsolutePath().toString());
        }

        @Override
        protected boolean isReady() {
            return answersPing(port);
        }
    }
}
