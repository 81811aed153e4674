package io.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A ClickHouse for tests. By default a private {@code clickhouse-server} on free loopback ports with its data,
 * config and logs in a temporary directory, shared by every test of the JVM ({@link #shared()}) and stopped at
 * JVM exit. With {@code SLUICE_CLICKHOUSE_URL=http://host:8123} set, an existing server is used instead (then
 * {@link #stop()}/{@link #start()} are unsupported and fault tests are skipped via {@link #isPrivate()}).
 *
 * <p>The config is minimal and written by this class (config.xml + users.xml): listen_host 127.0.0.1, http_port,
 * tcp_port, path/tmp_path/user_files_path inside the temp dir, logger to a file, user {@code default} without a
 * password, loopback only.
 */
public final class ClickHouseServer extends ServerHandle implements AutoCloseable {
    private static final String[] BINARIES = {"/usr/sbin/clickhouse-server", "clickhouse-server", "/usr/bin/clickhouse-server"};

    private static ClickHouseServer shared;
    private static final AtomicInteger DATABASES = new AtomicInteger();

    private final String url;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final java.nio.file.Path errorLog;

    ClickHouseServer(String url, Process process) {
        super(process, "SLUICE_CLICKHOUSE_URL");
        this.url = url;
        this.errorLog = process == null ? null : process.dir.resolve("log").resolve("server.err.log");
    }

    private static ClickHouseServer replicated;

    /**
     * A second private server, JVM-wide, whose config has a {@code <zookeeper>} section (the shared private
     * {@link ZooKeeperServer}) and {@code <macros>} {@code shard=01, replica=r1}, for {@code Replicated*MergeTree}
     * tables: {@code ReplicatedMergeTree('/clickhouse/tables/{shard}/db.t', '{replica}')}.
     */
    public static synchronized ClickHouseServer replicated() {
        if (replicated == null) {
            Process p = new Process(ZooKeeperServer.shared().port());
            p.start();
            replicated = new ClickHouseServer("http://127.0.0.1:" + p.httpPort, p);
            replicated.awaitZooKeeper();
        }
        return replicated;
    }

    /**
     * A new private server (not JVM-wide: the caller closes it) configured like {@link #replicated()} but with its
     * ZooKeeper at {@code 127.0.0.1:zooKeeperPort} — for example a {@link ZooKeeperProxy} in front of the shared
     * ZooKeeper, to cut its ZooKeeper connection at a chosen request.
     */
    public static ClickHouseServer withZooKeeperAt(int zooKeeperPort) {
        Process p = new Process(zooKeeperPort);
        p.start();
        ClickHouseServer server = new ClickHouseServer("http://127.0.0.1:" + p.httpPort, p);
        server.awaitZooKeeper();
        return server;
    }

    /** The server's error log (a private server's; the logger writes warnings and errors). */
    public java.nio.file.Path errorLog() {
        return errorLog;
    }

    /** Waits (bounded) until this server reaches its ZooKeeper: reads {@code system.zookeeper} at the root. */
    void awaitZooKeeper() {
        Await.until("ClickHouse at " + url + " reaches its ZooKeeper", java.time.Duration.ofSeconds(60), () -> {
            try {
                query("SELECT count() FROM system.zookeeper WHERE path = '/'");
                return true;
            } catch (RuntimeException e) {
                return false;
            }
        });
    }

    /** The JVM-wide instance, started on first use. */
    public static synchronized ClickHouseServer shared() {
        if (shared == null) {
            String external = System.getenv("SLUICE_CLICKHOUSE_URL");
            if (external != null && !external.isBlank()) {
                shared = new ClickHouseServer(stripSlash(external), null);
            } else {
                Process p = new Process();
                p.start();
                shared = new ClickHouseServer("http://127.0.0.1:" + p.httpPort, p);
            }
        }
        return shared;
    }

    /** True if a clickhouse-server binary is installed (a private server can be started). */
    public static boolean isInstalled() {
        return ServerProcess.isInstalled(BINARIES);
    }

    /**
     * A private server of its own (not the shared one), with its directory under {@code parent}; {@link #close()}
     * stops it and deletes its directory. The benchmarks use this.
     */
    public static ClickHouseServer startPrivate(Path parent) {
        Process p = new Process(parent);
        p.start();
        return new ClickHouseServer("http://127.0.0.1:" + p.httpPort, p);
    }

    /** Stops a server from {@link #startPrivate} and deletes its directory; the shared server is left running. */
    @Override
    public void close() {
        if (this != shared) {
            closeProcess();
        }
    }

    private static String stripSlash(String s) {
        return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
    }

    /** HTTP interface URL, e.g. {@code http://127.0.0.1:41234}. */
    public String url() {
        return url;
    }


    /** A fresh database with a unique name, so test classes never see each other's tables. */
    public String createDatabase(String prefix) {
        String db = prefix + "_" + ProcessHandle.current().pid() + "_" + DATABASES.incrementAndGet();
        execute("CREATE DATABASE IF NOT EXISTS " + db);
        return db;
    }

    /** Runs a statement; throws with the server's message if it fails. */
    public void execute(String sql) {
        query(sql);
    }

    /**
     * Runs a query and returns the raw response body (add {@code FORMAT TabSeparated} to the SQL).
     *
     * <p>The server closes idle keep-alive connections after 3 s (its default); a request that picks such a
     * connection from the client's pool just as the server closes it fails before the server read it. The JDK
     * client retries that only for GET, so this retries it once here: always for a read ({@code SELECT},
     * {@code SHOW}, {@code EXISTS}, {@code DESCRIBE}), and for a statement only when the connection had expired
     * (nothing was processed).
     */
    public String query(String sql) {
        HttpRequest req = HttpRequest.newBuilder(URI.create(url + "/"))
                .timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(sql, StandardCharsets.UTF_8))
                .build();
        try {
            HttpResponse<String> r;
            try {
                r = http.send(req, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            } catch (IOException first) {
                if (!isRead(sql) && !connectionExpired(first)) {
                    throw first;
                }
                r = http.send(req, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            }
            if (r.statusCode() != 200) {
                throw new IllegalStateException("ClickHouse " + r.statusCode() + " for [" + sql + "]: " + r.body());
            }
            return r.body();
        } catch (IOException e) {
            throw new UncheckedIOException("ClickHouse at " + url + " unreachable for [" + sql + "]", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static boolean isRead(String sql) {
        String head = sql.stripLeading().toUpperCase(java.util.Locale.ROOT);
        return head.startsWith("SELECT") || head.startsWith("SHOW") || head.startsWith("EXISTS")
                || head.startsWith("DESCRIBE");
    }

    private static boolean connectionExpired(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getClass().getSimpleName().equals("ConnectionExpiredException")
                    || String.valueOf(t.getMessage()).contains("header parser received no bytes")) {
                return true;
            }
        }
        return false;
    }

    /** A single number, e.g. {@code SELECT count() FROM db.t}. */
    public long queryLong(String sql) {
        return Long.parseLong(query(sql + " FORMAT TabSeparated").trim());
    }

    /** Result lines of a query in TabSeparated format. */
    public List<String> queryLines(String sql) {
        String body = query(sql + " FORMAT TabSeparated");
        return body.isEmpty() ? List.of() : List.of(body.split("\n"));
    }

    /** The private server process. */
    static final class Process extends ServerProcess {
        final int httpPort = freePort();
        final int tcpPort = freePort();

        final int interserverPort = freePort();
        private final int zooKeeperPort;

        Process() {
            this(-1, null);
        }

        /** @param zooKeeperPort a ZooKeeper on 127.0.0.1 for replicated tables, or -1 for none */
        Process(int zooKeeperPort) {
            this(zooKeeperPort, null);
        }

        /** @param parent where the server's temporary directory goes; null for the system's temporary directory */
        Process(Path parent) {
            this(-1, parent);
        }

        Process(int zooKeeperPort, Path parent) {
            super("clickhouse", parent);
            this.zooKeeperPort = zooKeeperPort;
            writeConfig("");
        }

        /** A server whose config the caller writes with {@link #writeConfig(String)} (ports are chosen already). */
        Process(String name) {
            super(name);
            this.zooKeeperPort = -1;
        }

        /** Writes config.xml and users.xml; {@code extra} is XML added inside {@code <yandex>} (cluster settings). */
        void writeConfig(String extra) {
            String d = dir.toAbsolutePath().toString();
            String config = """
                    <?xml version="1.0"?>
                    <yandex>
                      <logger><level>warning</level><log>%1$s/log/server.log</log><errorlog>%1$s/log/server.err.log</errorlog><size>50M</size><count>1</count></logger>
                      <listen_host>127.0.0.1</listen_host>
                      <http_port>%2$d</http_port>
                      <tcp_port>%3$d</tcp_port>
                      <path>%1$s/data/</path>
                      <tmp_path>%1$s/tmp/</tmp_path>
                      <user_files_path>%1$s/user_files/</user_files_path>
                      <format_schema_path>%1$s/format_schemas/</format_schema_path>
                      <users_config>%1$s/users.xml</users_config>
                      <default_profile>default</default_profile>
                      <default_database>default</default_database>
                      <mark_cache_size>268435456</mark_cache_size>
                      <uncompressed_cache_size>268435456</uncompressed_cache_size>
                      <max_concurrent_queries>200</max_concurrent_queries>
                      <keep_alive_timeout>3</keep_alive_timeout>
                      <mlock_executable>false</mlock_executable>
                      <interserver_http_host>127.0.0.1</interserver_http_host>
                      <interserver_http_port>%4$d</interserver_http_port>
                    %5$s
                    </yandex>
                    """.formatted(d, httpPort, tcpPort, interserverPort, (zooKeeperPort < 0 ? "" : "<zookeeper><node><host>127.0.0.1</host><port>"
                    + zooKeeperPort + "</port></node></zookeeper><macros><shard>01</shard><replica>r1</replica></macros>") + extra);
            String users = """
                    <?xml version="1.0"?>
                    <yandex>
                      <profiles><default><max_memory_usage>4000000000</max_memory_usage></default></profiles>
                      <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
                      <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
                    </yandex>
                    """;
            try {
                Files.createDirectories(dir.resolve("log"));
                Files.writeString(dir.resolve("config.xml"), config);
                Files.writeString(dir.resolve("users.xml"), users);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        protected List<String> command() {
            Path bin = findBinary(BINARIES);
            return List.of(bin.toString(), "--config-file=" + dir.resolve("config.xml").toAbsolutePath());
        }

        @Override
        protected boolean isReady() {
            try (java.net.Socket s = new java.net.Socket()) {
                s.connect(new java.net.InetSocketAddress("127.0.0.1", httpPort), 200);
                s.getOutputStream().write("GET /?query=SELECT%201 HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                s.setSoTimeout(2000);
                String resp = new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
                return resp.startsWith("HTTP/1.0 200") || resp.startsWith("HTTP/1.1 200");
            } catch (IOException e) {
                return false;
            }
        }
    }
}
