package io.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;

/**
 * A private standalone ZooKeeper for tests (Debian's {@code zookeeper} package: {@code /usr/share/java/zookeeper.jar}
 * run as {@code QuorumPeerMain} in a child JVM) on a free loopback port, data in a temporary directory, admin server
 * off. Ready when it answers the {@code ruok} four-letter word. Used by {@link ClickHouseCluster} for replication.
 */
public final class ZooKeeperServer extends ServerProcess {
    private static final String JAR = "/usr/share/java/zookeeper.jar";

    private final int port = freePort();

    public ZooKeeperServer() {
        super("zookeeper");
        String cfg = """
                tickTime=500
                initLimit=10
                syncLimit=5
                dataDir=%s
                clientPort=%d
                clientPortAddress=127.0.0.1
                maxClientCnxns=0
                admin.enableServer=false
                4lw.commands.whitelist=ruok,stat
                """.formatted(dir.resolve("data").toAbsolutePath(), port);
        try {
            Files.createDirectories(dir.resolve("data"));
            Files.writeString(dir.resolve("zoo.cfg"), cfg);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Loopback client port. */
    public int port() {
        return port;
    }

    @Override
    protected List<String> command() {
        if (!Files.isReadable(Path.of(JAR))) {
            throw new IllegalStateException(JAR + " is missing: apt-get install zookeeper (scripts/test.sh installs it)");
        }
        return List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx128m",
                "-Dzookeeper.admin.enableServer=false", "-Dzookeeper.4lw.commands.whitelist=ruok,stat",
                "-cp", "/etc/zookeeper/conf:" + JAR,
                "org.apache.zookeeper.server.quorum.QuorumPeerMain", dir.resolve("zoo.cfg").toAbsolutePath().toString());
    }

    @Override
    protected boolean isReady() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            s.setSoTimeout(2000);
            s.getOutputStream().write("ruok".getBytes(StandardCharsets.US_ASCII));
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).startsWith("imok");
        } catch (IOException e) {
            return false;
        }
    }
}
