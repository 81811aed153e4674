package io.sluice.bench.server;

import io.sluice.bench.internal.Await;
import io.sluice.bench.internal.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A private redis-server for one benchmark run: a free port on 127.0.0.1, a temporary directory, no persistence;
 * stopped (and its directory deleted) on close. {@code SLUICE_REDIS_SERVER} may name another binary.
 */
public final class RedisServer implements AutoCloseable {
    public static final Path DEFAULT_BINARY = Path.of("/usr/bin/redis-server");

    private final TempDir dir;
    private final Process process;
    private final int port;

    private RedisServer(TempDir dir, Process process, int port) {
        this.dir = dir;
        this.process = process;
        this.port = port;
    }

    /** The binary to run, or null when there is none on this machine. */
    public static Path binary() {
        String env = System.getenv("SLUICE_REDIS_SERVER");
        Path p = env != null ? Path.of(env) : DEFAULT_BINARY;
        return Files.isExecutable(p) ? p : null;
    }

    public static RedisServer start(Path workDir) throws IOException, TimeoutException, InterruptedException {
        Path bin = binary();
        if (bin == null) {
            throw new IOException("redis-server not found at " + DEFAULT_BINARY + " (set SLUICE_REDIS_SERVER)");
        }
        TempDir dir = new TempDir(workDir, "sluice-bench-redis");
        int port = FreePort.next();
        Process p = new ProcessBuilder(List.of(bin.toString(), "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--dir", dir.path().toString(), "--save", "", "--appendonly", "no", "--daemonize", "no",
                "--protected-mode", "yes", "--loglevel", "warning"))
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile())
                .start();
        RedisServer server = new RedisServer(dir, p, port);
        try {
            Await.until("redis-server accepting on port " + port, () -> !p.isAlive() || FreePort.accepting(port), Duration.ofSeconds(20));
            if (!p.isAlive()) {
                throw new IOException("redis-server exited with " + p.exitValue() + ": " + Files.readString(dir.resolve("redis.log")));
            }
        } catch (IOException | TimeoutException | RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    public int port() {
        return port;
    }

    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    public long pid() {
        return process.pid();
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        dir.close();
    }
}
