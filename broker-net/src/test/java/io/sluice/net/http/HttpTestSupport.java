package io.sluice.net.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.core.Broker;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.PartitionReader;
import io.sluice.core.TopicPartition;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;

/** Real-socket clients for the HTTP tests: the JDK HttpClient, and a raw socket for what HttpClient won't send. */
final class HttpTestSupport {
    static final ObjectMapper JSON = new ObjectMapper();
    static final Duration TIMEOUT = Duration.ofSeconds(30);

    private HttpTestSupport() {
    }

    static HttpClient client() {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(TIMEOUT).build();
    }

    static URI uri(HttpApiServer server, String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + server.port() + pathAndQuery);
    }

    static HttpResponse<String> get(HttpClient client, HttpApiServer server, String path, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(server, path)).timeout(TIMEOUT).GET();
        if (headers.length > 0) {
            b.headers(headers);
        }
        return send(client, b.build());
    }

    static HttpResponse<String> post(HttpClient client, HttpApiServer server, String path, byte[] body, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(server, path)).timeout(TIMEOUT)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return send(client, b.build());
    }

    static HttpResponse<String> post(HttpClient client, HttpApiServer server, String path, String body, String... headers) {
        return post(client, server, path, body.getBytes(StandardCharsets.UTF_8), headers);
    }

    static HttpResponse<String> send(HttpClient client, HttpRequest request) {
        try {
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static JsonNode json(HttpResponse<String> response) {
        try {
            return JSON.readTree(response.body());
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + response.body(), e);
        }
    }

    /** Every record of the topic's partition, from its start. */
    static List<ConsumerRecord> readAll(Broker broker, String topic, int partition) {
        List<ConsumerRecord> out = new ArrayList<>();
        try (PartitionReader reader = broker.openReader(new TopicPartition(topic, partition))) {
            while (reader.read(1000, 1 << 20, out::add) > 0) {
                // keep reading until the end
            }
        }
        return out;
    }

    static long endOffsetSum(Broker broker, String topic) {
        return broker.partitionsOf(topic).stream().mapToLong(broker::endOffset).sum();
    }

    /** Polls until the condition holds; fails after the deadline. */
    static void await(String what, BooleanSupplier condition) {
        io.sluice.testkit.Await.until(what, TIMEOUT, condition);
    }

    /** A raw HTTP/1.1 connection, for requests HttpClient will not send (slow drips, lies, garbage). */
    static final class RawConnection implements AutoCloseable {
        final Socket socket;
        private final InputStream in;
        private final OutputStream out;

        RawConnection(int port) {
            try {
                socket = new Socket();
                socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
                socket.setSoTimeout((int) TIMEOUT.toMillis());
                in = socket.getInputStream();
                out = socket.getOutputStream();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        RawConnection write(String text) {
            return write(text.getBytes(StandardCharsets.ISO_8859_1));
        }

        RawConnection write(byte[] bytes) {
            try {
                out.write(bytes);
                out.flush();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return this;
        }

        /** Reads one response (status, headers, Content-Length body). */
        RawResponse readResponse() {
            try {
                String statusLine = readLine();
                if (statusLine == null) {
                    throw new AssertionError("connection closed before a response");
                }
                Map<String, String> headers = new TreeMap<>();
                String line;
                while ((line = readLine()) != null && !line.isEmpty()) {
                    int colon = line.indexOf(':');
                    headers.put(line.substring(0, colon).trim().toLowerCase(Locale.ROOT), line.substring(colon + 1).trim());
                }
                int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
                byte[] body = in.readNBytes(length);
                return new RawResponse(Integer.parseInt(statusLine.split(" ")[1]), headers, new String(body, StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** True once the server closed the connection (a read returns end of stream, or the connection is reset). */
        boolean closedByServer() {
            try {
                return in.read() == -1;
            } catch (java.net.SocketTimeoutException e) {
                return false;
            } catch (IOException reset) {
                return true;
            }
        }

        private String readLine() throws IOException {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) != -1) {
                if (b == '\n') {
                    String s = line.toString(StandardCharsets.ISO_8859_1);
                    return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
                }
                line.write(b);
            }
            return line.size() == 0 ? null : line.toString(StandardCharsets.ISO_8859_1);
        }

        @Override
        public void close() {
            try {
                socket.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    record RawResponse(int status, Map<String, String> headers, String body) {
    }
}
