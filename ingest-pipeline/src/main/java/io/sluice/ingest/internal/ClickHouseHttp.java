package io.sluice.ingest.internal;

import io.sluice.ingest.IngestException;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * ClickHouse's HTTP interface spoken directly with {@link HttpClient}.
 *
 * <p>Why not the official Java clients (client-v2, the JDBC driver): against the 18.16 server the tests use they
 * fail — the server ignores the format and database headers client-v2 relies on, breaks compressed responses, and
 * rejects settings their insert path adds. The HTTP interface itself is
 * stable across every ClickHouse version: {@code POST /?query=INSERT INTO db.t FORMAT JSONEachRow} with the rows
 * as the body, the response body holding the error text ({@code Code: 27, e.displayText() = ...}) on failure.
 * One pooled keep-alive client, no compression (loopback; the server's gzip on 18.16 is unreliable), settings only
 * as URL parameters and only those the server reported in {@code system.settings}.
 *
 * <p><b>Replicas.</b> Built with several URLs (the replicas of one shard), requests go to one replica at a time; a
 * replica that is unreachable or answers that it cannot take writes now (read-only table, lost ZooKeeper session)
 * is skipped: the failing request is reported as usual and the caller's retry goes to the next replica, so a down
 * replica is tried again only after the others failed too.
 *
 * <p>The client's asynchronous work (response bodies, completing {@link #insertAsync} futures) runs on one bounded,
 * named executor ({@code sluice-clickhouse-<name>-N}, {@link #EXECUTOR_THREADS} daemon threads, at most
 * {@link #EXECUTOR_QUEUE} tasks waiting; beyond that, or after close, the submitting thread runs the task itself,
 * which slows the caller instead of dropping work) rather than the JDK's default unbounded, unnamed pool. {@link #close()} stops it
 * with the sink or pipeline that owns this client; on Java 17 the client's own selector thread ends once the client
 * is unreachable (there is no {@code HttpClient.close()} before Java 21).
 */
public final class ClickHouseHttp implements AutoCloseable {
    /** Threads of the client's executor: completions are short; INSERT concurrency is bounded by the callers. */
    public static final int EXECUTOR_THREADS = 2;
    /** Tasks that may wait for the executor before submitters run them themselves. */
    public static final int EXECUTOR_QUEUE = 1024;

    /**
     * ClickHouse error codes that mean "this data is bad" (parse, type, size): retrying the same rows cannot help.
     * Not 16 (NO_SUCH_COLUMN_IN_TABLE): that is the table changing under the pipeline (schema drift), which would
     * dead-letter every row; it is retried with backoff and reported instead ({@link IngestException#isSchemaError()}).
     */
    private static final Set<Integer> DATA_ERRORS = Set.of(6, 25, 26, 27, 32, 33, 38, 41, 53, 69, 70, 72, 117, 131, 190, 321, 349);
    private static final Pattern CODE = Pattern.compile("Code: (\\d+)");
    /**
     * Codes that say "this replica cannot serve the request now, another one may": 209 SOCKET_TIMEOUT,
     * 210 NETWORK_ERROR, 225 NO_ZOOKEEPER, 242 TABLE_IS_READ_ONLY, 319 UNKNOWN_STATUS_OF_INSERT, 999 KEEPER_EXCEPTION.
     */
    private static final Set<Integer> REPLICA_ERRORS = Set.of(209, 210, 225, 242, 319, 999);

    private final java.util.List<URI> replicas;
    private volatile int current;
    private volatile URI base;
    private final String authorization;
    private final Duration timeout;
    private final HttpClient client;
    private final ThreadPoolExecutor executor;

    public ClickHouseHttp(String url, String user, String password, Duration timeout, String name) {
        this(java.util.List.of(url), user, password, timeout, name);
    }

    /**
     * One shard's replicas: requests go to one at a time, moving on when it fails (see the class comment).
     *
     * @param name names the executor's threads ({@code sluice-clickhouse-<name>-N}): the pipeline's name
     */
    public ClickHouseHttp(java.util.List<String> replicaUrls, String user, String password, Duration timeout, String name) {
        this.replicas = replicaUrls.stream().map(url -> URI.create(url.endsWith("/") ? url : url + "/")).toList();
        this.base = replicas.get(0);
        this.authorization = "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
        this.timeout = timeout;
        AtomicInteger threads = new AtomicInteger();
        this.executor = new ThreadPoolExecutor(EXECUTOR_THREADS, EXECUTOR_THREADS, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(EXECUTOR_QUEUE), r -> {
                    Thread t = new Thread(r, "sluice-clickhouse-" + name + "-" + threads.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                }, (task, pool) -> task.run()); // full or shut down: the submitter runs it (never dropped)
        this.client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
                .executor(executor).build();
    }

    /** Stops the executor once the work already handed to it is done (waits up to 5 s); safe to call twice. */
    @Override
    public void close() {
        executor.shutdown();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The server's URL without credentials (for messages and logs). */
    public String url() {
        return io.sluice.ingest.IngestConfig.redact(base.toString());
    }

    /** Every replica URL this client may send to. */
    public java.util.List<String> replicaUrls() {
        return replicas.stream().map(URI::toString).toList();
    }

    /**
     * Sends the next requests to replica {@code index} (in the order of the URLs given): the shard's writer replica
     * ({@link ShardWriter}); a failure there still moves the following request on to the next one.
     */
    void pin(int index) {
        URI to = replicas.get(index);
        synchronized (this) {
            current = index;
            base = to;
        }
    }

    /** After a failure at {@code failed}: the next request goes to the next replica (no-op with one URL). */
    private void skip(URI failed) {
        if (replicas.size() > 1 && failed == base) {
            synchronized (this) {
                if (failed == base) {
                    current = (current + 1) % replicas.size();
                    base = replicas.get(current);
                }
            }
        }
    }

    private <T> T onReplica(java.util.function.Function<URI, T> request) {
        URI at = base;
        try {
            return request.apply(at);
        } catch (IngestException e) {
            if (e.isOutcomeUnknown() || REPLICA_ERRORS.contains(e.serverCode())) {
                skip(at);
            }
            throw e;
        }
    }

    /** Runs a statement or query and returns the raw body (put {@code FORMAT TabSeparated} in the SQL). */
    public String query(String sql) {
        return onReplica(at -> query(at, sql));
    }

    private String query(URI at, String sql) {
        HttpRequest req = request(at, Map.of()).POST(HttpRequest.BodyPublishers.ofString(sql, StandardCharsets.UTF_8)).build();
        try {
            HttpResponse<byte[]> r = client.send(req, HttpResponse.BodyHandlers.ofByteArray());
            return check(r, sql);
        } catch (IOException e) {
            throw transportError(at, e, sql);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IngestException("interrupted during [" + sql + "]", -1, false, true, e);
        }
    }

    /** Blocking INSERT: {@code insertSql} is {@code INSERT INTO db.t [(cols)] FORMAT X}, the body the rows. */
    public void insert(String insertSql, Map<String, String> settings, byte[] body, int offset, int length) {
        onReplica(at -> {
            insert(at, insertSql, settings, body, offset, length);
            return null;
        });
    }

    private void insert(URI at, String insertSql, Map<String, String> settings, byte[] body, int offset, int length) {
        HttpRequest req = insertRequest(at, insertSql, settings, body, offset, length);
        try {
            check(client.send(req, HttpResponse.BodyHandlers.ofByteArray()), insertSql);
        } catch (IOException e) {
            throw transportError(at, e, insertSql);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IngestException("interrupted during [" + insertSql + "]", -1, false, true, e);
        }
    }

    /**
     * Blocking INSERT ... SELECT whose rows travel as the request's external data: a {@code multipart/form-data}
     * body with one part named {@link IdempotentInsert#EXTERNAL}, read by the server as {@code statement.format()}
     * with {@code statement.structure()}; the statement runs under {@code statement.queryId()}.
     *
     * <pre>
     *   --B CRLF Content-Disposition: form-data; name="sluice_batch"; filename="sluice_batch" CRLF
     *   Content-Type: application/octet-stream CRLF CRLF &lt;rows&gt; CRLF --B-- CRLF
     * </pre>
     * B is 32 random hex digits: a collision with row bytes is as likely as guessing a random 128-bit number.
     */
    public void insertExternal(IdempotentInsert.Statement statement, Map<String, String> settings, byte[] body, int offset, int length) {
        onReplica(at -> {
            insertExternal(at, statement, settings, body, offset, length);
            return null;
        });
    }

    private void insertExternal(URI at, IdempotentInsert.Statement statement, Map<String, String> settings, byte[] body, int offset, int length) {
        String boundary = java.util.UUID.randomUUID().toString().replace("-", "");
        Map<String, String> params = new java.util.LinkedHashMap<>(settings);
        params.put("query_id", statement.queryId());
        params.put(IdempotentInsert.EXTERNAL + "_format", statement.format());
        params.put(IdempotentInsert.EXTERNAL + "_structure", statement.structure());
        params.put("query", statement.sql());
        byte[] head = ("--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + IdempotentInsert.EXTERNAL
                + "\"; filename=\"" + IdempotentInsert.EXTERNAL + "\"\r\nContent-Type: application/octet-stream\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        byte[] tail = ("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.US_ASCII);
        HttpRequest req = request(at, params)
                .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                .POST(HttpRequest.BodyPublishers.concat(HttpRequest.BodyPublishers.ofByteArray(head),
                        HttpRequest.BodyPublishers.ofByteArray(body, offset, length), HttpRequest.BodyPublishers.ofByteArray(tail)))
                .build();
        try {
            check(client.send(req, HttpResponse.BodyHandlers.ofByteArray()), statement.sql());
        } catch (IOException e) {
            throw transportError(at, e, statement.sql());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IngestException("interrupted during [" + abbreviate(statement.sql()) + "]", -1, false, true, e);
        }
    }

    /** Non-blocking INSERT: the future fails with {@link IngestException}. */
    public CompletableFuture<Void> insertAsync(String insertSql, Map<String, String> settings, byte[] body, int offset, int length) {
        URI at = base;
        HttpRequest req = insertRequest(at, insertSql, settings, body, offset, length);
        return client.sendAsync(req, HttpResponse.BodyHandlers.ofByteArray()).handle((r, err) -> {
            if (err != null) {
                Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
                skip(at);
                throw cause instanceof IOException io ? transportError(at, io, insertSql)
                        : new IngestException("INSERT failed: " + cause, -1, false, true, cause);
            }
            check(r, insertSql);
            return null;
        });
    }

    private HttpRequest insertRequest(URI at, String insertSql, Map<String, String> settings, byte[] body, int offset, int length) {
        Map<String, String> params = new java.util.LinkedHashMap<>(settings);
        params.put("query", insertSql);
        return request(at, params).POST(HttpRequest.BodyPublishers.ofByteArray(body, offset, length)).build();
    }

    private HttpRequest.Builder request(URI base, Map<String, String> params) {
        StringBuilder q = new StringBuilder();
        for (Map.Entry<String, String> e : params.entrySet()) {
            q.append(q.length() == 0 ? "?" : "&").append(e.getKey()).append('=')
                    .append(URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8));
        }
        return HttpRequest.newBuilder(base.resolve(q.length() == 0 ? "" : q.toString()))
                .timeout(timeout)
                .header("Authorization", authorization);
    }

    private static String check(HttpResponse<byte[]> r, String sql) {
        String body = new String(r.body(), StandardCharsets.UTF_8);
        if (r.statusCode() == 200) {
            return body;
        }
        Matcher m = CODE.matcher(body);
        int code = m.find() ? Integer.parseInt(m.group(1)) : -1;
        String msg = body.strip();
        throw new IngestException("ClickHouse refused [" + abbreviate(sql) + "] (HTTP " + r.statusCode() + "): " + msg,
                code, DATA_ERRORS.contains(code), false, null);
    }

    private static IngestException transportError(URI base, IOException e, String sql) {
        boolean timedOut = e instanceof HttpTimeoutException;
        return new IngestException("ClickHouse at " + io.sluice.ingest.IngestConfig.redact(base.toString()) + (timedOut ? " timed out" : " unreachable") + " during ["
                + abbreviate(sql) + "]: " + e, -1, false, true, e);
    }

    private static String abbreviate(String sql) {
        return sql.length() <= 200 ? sql : sql.substring(0, 200) + "...";
    }
}
