package io.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A private ZooKeeper for tests (Debian's {@code zookeeper} package, {@code /usr/share/java/zookeeper.jar}), for
 * ClickHouse's {@code Replicated*MergeTree}: standalone {@code QuorumPeerMain} on a free loopback port, data in a
 * temporary directory, admin server off, only the {@code srvr} four-letter word (the readiness probe). One instance
 * per JVM ({@link #shared()}), stopped at JVM exit.
 */
public final class ZooKeeperServer extends ServerHandle {
    private static ZooKeeperServer shared;

    private final Process process;

    private ZooKeeperServer(Process process) {
        super(process, "(no variable)");
        this.process = process;
    }

    /** The JVM-wide instance, started on first use. */
    public static synchronized ZooKeeperServer shared() {
        if (shared == null) {
            Process p = new Process();
            p.start();
            shared = new ZooKeeperServer(p);
        }
        return shared;
    }

    public int port() {
        return process.port;
    }

    static final class Process extends ServerProcess {
        final int port = freePort();

        Process() {
            super("zookeeper");
            String cfg = """
                    tickTime=2000
                    dataDir=%s
                    clientPort=%d
                    clientPortAddress=127.0.0.1
                    admin.enableServer=false
                    4lw.commands.whitelist=srvr
                    maxClientCnxns=0
                    """.formatted(dir.resolve("data").toAbsolutePath(), port);
            try {
                Files.createDirectories(dir.resolve("data"));
                Files.writeString(dir.resolve("zoo.cfg"), cfg);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        protected List<String> command() {
            Path jar = Path.of("/usr/share/java/zookeeper.jar");
            if (!Files.isReadable(jar)) {
                throw new IllegalStateException(jar + " is missing (scripts/test.sh installs the zookeeper package)");
            }
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            return List.of(java, "-Xmx128m", "-Dzookeeper.admin.enableServer=false", "-cp", jar.toString(),
                    "org.apache.zookeeper.server.quorum.QuorumPeerMain", dir.resolve("zoo.cfg").toAbsolutePath().toString());
        }

        /**
         * Serving, not merely running: {@code ruok} answers {@code imok} while the server still loads its database and
         * closes client sessions ("ZooKeeperServer not running"), which ClickHouse saw as a failed handshake (a
         * CREATE TABLE of a replicated table failed with code 999 in a full run). {@code srvr} names the mode only
         * once the server serves requests.
         */
        @Override
        protected boolean isReady() {
            try (java.net.Socket s = new java.net.Socket()) {
                s.connect(new java.net.InetSocketAddress("127.0.0.1", port), 200);
                s.setSoTimeout(2000);
                s.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
                return new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).contains("Mode: standalone");
            } catch (IOException e) {
                return false;
            }
        }
    }
}
