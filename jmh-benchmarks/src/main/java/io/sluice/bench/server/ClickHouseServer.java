package io.sluice.bench.server;

import io.sluice.bench.internal.Await;
import io.sluice.bench.internal.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A private clickhouse-server for one benchmark run: free HTTP and native ports on 127.0.0.1, a minimal config and
 * its data in a temporary directory, stopped and deleted on close. {@code SLUICE_CLICKHOUSE_SERVER} may name
 * another binary. Also a tiny HTTP client for queries and raw inserts (the bench needs nothing more).
 */
public final class ClickHouseServer implements AutoCloseable {
    public static final Path DEFAULT_BINARY = Path.of("/usr/sbin/clickhouse-server");

    private final TempDir dir;
    private final Process process;
    private final int httpPort;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private ClickHouseServer(TempDir dir, Process process, int httpPort) {
        this.dir = dir;
        this.process = process;
        this.httpPort = httpPort;
    }

    public static Path binary() {
        String env = System.getenv("SLUICE_CLICKHOUSE_SERVER");
        Path p = env != null ? Path.of(env) : DEFAULT_BINARY;
        return Files.isExecutable(p) ? p : null;
    }

    public static ClickHouseServer start(Path workDir) throws IOException, TimeoutException, InterruptedException {
        Path bin = binary();
        if (bin == null) {
            throw new IOException("clickhouse-server not found at " + DEFAULT_BINARY + " (set SLUICE_CLICKHOUSE_SERVER)");
        }
        TempDir dir = new TempDir(workDir, "sluice-bench-clickhouse");
        int http = FreePort.next();
        int tcp = FreePort.next();
        for (String sub : List.of("data", "tmp", "log", "user_files", "format_schemas")) {
            Files.createDirectories(dir.resolve(sub));
        }
        Path d = dir.path().toAbsolutePath();
        Files.writeString(dir.resolve("config.xml"), """
                <yandex>
                  <logger><level>warning</level><log>%1$s/log/server.log</log><errorlog>%1$s/log/error.log</errorlog><console>0</console></logger>
                  <http_port>%2$d</http_port>
                  <tcp_port>%3$d</tcp_port>
                  <listen_host>127.0.0.1</listen_host>
                  <path>%1$s/data/</path>
                  <tmp_path>%1$s/tmp/</tmp_path>
                  <user_files_path>%1$s/user_files/</user_files_path>
                  <format_schema_path>%1$s/format_schemas/</format_schema_path>
                  <users_config>users.xml</users_config>
                  <default_profile>default</default_profile>
                  <default_database>default</default_database>
                  <mark_cache_size>268435456</mark_cache_size>
                  <max_concurrent_queries>100</max_concurrent_queries>
                </yandex>
                """.formatted(d, http, tcp));
        Files.writeString(dir.resolve("users.xml"), """
                <yandex>
                  <profiles><default><max_memory_usage>4000000000</max_memory_usage></default></profiles>
                  <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
                    <profile>default</profile><quota>default</quota></default></users>
                  <quotas><default></default></quotas>
                </yandex>
                """);
        Process p = new ProcessBuilder(bin.toString(), "--config-file=" + d.resolve("config.xml"))
                .directory(dir.path().toFile())
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("log/stdout.log").toFile())
                .start();
        ClickHouseServer server = new ClickHouseServer(dir, p, http);
        try {
            Await.until("clickhouse-server answering /ping on " + http, () -> !p.isAlive() || server.ping(), Duration.ofSeconds(60));
            if (!p.isAlive()) {
                throw new IOException("clickhouse-server exited with " + p.exitValue() + ": "
                        + Files.readString(dir.resolve("log/stdout.log")));
            }
        } catch (IOException | TimeoutException | RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    public String url() {
        return "http://127.0.0.1:" + httpPort;
    }

    public int httpPort() {
        return httpPort;
    }

    private boolean ping() {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url() + "/ping")).timeout(Duration.ofSeconds(2)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Runs a statement; returns the body (trimmed). Throws with the server's message on an error status. */
    public String query(String sql) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url() + "/"))
                .POST(HttpRequest.BodyPublishers.ofString(sql)).timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("ClickHouse " + r.statusCode() + " for [" + sql + "]: " + r.body());
        }
        return r.body().trim();
    }

    /** {@code INSERT INTO table FORMAT format} with a pre-built body; returns when ClickHouse has accepted it. */
    public void insert(String table, String format, byte[] body) throws IOException, InterruptedException {
        String q = URLEncoder.encode("INSERT INTO " + table + " FORMAT " + format, StandardCharsets.UTF_8);
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url() + "/?query=" + q))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("ClickHouse " + r.statusCode() + " for insert into " + table + ": " + r.body());
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        dir.close();
    }
}
