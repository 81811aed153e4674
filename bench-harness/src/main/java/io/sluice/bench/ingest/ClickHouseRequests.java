package io.sluice.bench.ingest;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The harness's own ClickHouse HTTP calls: the stage tables' DDL, the row counts, and the raw INSERT baseline. Plain
 * {@link HttpClient} POSTs with nothing of Sluice around them, so the baseline's ceiling is ClickHouse's and the JDK's,
 * and the harness does not reach into ingest-pipeline's internal client (issue 21).
 */
final class ClickHouseRequests {
    private final URI base;
    private final Duration timeout;
    private final HttpClient client;

    ClickHouseRequests(String url, Duration timeout) {
        this.base = URI.create(url.endsWith("/") ? url : url + "/");
        this.timeout = timeout;
        this.client = HttpClient.newBuilder().connectTimeout(timeout).build();
    }

    /** Runs a statement or query and returns the body (put {@code FORMAT TabSeparated} in the SQL). */
    String query(String sql) {
        return send(HttpRequest.newBuilder(base).timeout(timeout)
                .POST(HttpRequest.BodyPublishers.ofString(sql, StandardCharsets.UTF_8)).build(), sql);
    }

    /** {@code insertSql} is {@code INSERT INTO t [(cols)] FORMAT X}; the body holds the rows. */
    void insert(String insertSql, byte[] body) {
        URI uri = base.resolve("?query=" + URLEncoder.encode(insertSql, StandardCharsets.UTF_8));
        send(HttpRequest.newBuilder(uri).timeout(timeout).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), insertSql);
    }

    private String send(HttpRequest request, String sql) {
        try {
            HttpResponse<String> r = client.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            if (r.statusCode() != 200) {
                throw new IllegalStateException("ClickHouse answered " + r.statusCode() + " to [" + sql + "]: " + r.body().strip());
            }
            return r.body();
        } catch (IOException e) {
            throw new UncheckedIOException("ClickHouse request failed: [" + sql + "]", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during [" + sql + "]", e);
        }
    }
}
