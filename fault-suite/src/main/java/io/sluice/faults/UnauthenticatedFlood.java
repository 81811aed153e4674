package io.sluice.faults;

import io.sluice.testkit.Await;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.GZIPOutputStream;

/**
 * Issue 11's memory attack on a {@code sluice broker} process with a token configured: {@link #CONNECTIONS}
 * connections that never authenticate each send a frame header announcing {@link #FRAME_BYTES} and then most of
 * its body, while {@link #BOMBS} HTTP requests without a token post a gzip bomb (a small body that inflates to
 * {@link #BOMB_INFLATED_BYTES}). The broker's resident memory is sampled from {@code /proc/<pid>/status} every few
 * milliseconds from before the attack until every attacker is done and the connections have been held open for a
 * while. The result is the baseline and the peak.
 */
public final class UnauthenticatedFlood {
    public static final int CONNECTIONS = 100;
    public static final int FRAME_BYTES = 16 << 20;
    /** "most of the body": 15 MiB of the announced 16 MiB */
    public static final int BODY_SENT_BYTES = 15 << 20;
    public static final int BOMBS = 20;
    public static final long BOMB_INFLATED_BYTES = 256L << 20;

    /** Figures of one attack. */
    public record Result(long baselineRss, long peakRss, int connectionsCut, int bombsAnswered, long bytesSent, boolean brokerAlive) {
        public long growth() {
            return peakRss - baselineRss;
        }

        @Override
        public String toString() {
            return String.format("broker RSS %.0f MiB before, peak %.0f MiB (growth %.0f MiB); %d of %d frame connections cut by the broker,"
                            + " %d of %d gzip bombs answered, %.0f MiB sent, broker alive after: %s",
                    baselineRss / 1048576.0, peakRss / 1048576.0, growth() / 1048576.0, connectionsCut, CONNECTIONS,
                    bombsAnswered, BOMBS, bytesSent / 1048576.0, brokerAlive);
        }
    }

    private UnauthenticatedFlood() {
    }

    /** Starts a broker with a token under {@code runDir}, attacks it, and stops it. */
    public static Result run(Path runDir) throws Exception {
        int port = Cluster.freePort();
        int httpPort = Cluster.freePort();
        try (Node broker = new Node("broker-flood", runDir, "4g", Map.of("SLUICE_AUTH_TOKEN", "torture-secret-token"),
                "sluice broker: binary protocol on", "broker", "--data-dir", runDir.resolve("data").toString(),
                "--port", Integer.toString(port), "--http-port", Integer.toString(httpPort))) {
            broker.start();
            long baseline = broker.residentBytes();
            AtomicLong peak = new AtomicLong(baseline);
            CountDownLatch done = new CountDownLatch(1);
            Thread sampler = new Thread(() -> {
                try {
                    do {
                        long rss = broker.residentBytes();
                        peak.accumulateAndGet(rss, Math::max);
                    } while (!done.await(5, TimeUnit.MILLISECONDS));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "flood-rss-sampler");
            sampler.start();

            AtomicInteger cut = new AtomicInteger();
            AtomicInteger answered = new AtomicInteger();
            AtomicLong sent = new AtomicLong();
            List<Socket> held = new ArrayList<>();
            List<Thread> attackers = new ArrayList<>();
            byte[] bomb = gzipOfZeros(BOMB_INFLATED_BYTES);
            try {
                for (int i = 0; i < CONNECTIONS; i++) {
                    Socket s = new Socket();
                    held.add(s);
                    attackers.add(new Thread(() -> frameAttack(s, port, sent, cut), "flood-frame-" + i));
                }
                for (int i = 0; i < BOMBS; i++) {
                    attackers.add(new Thread(() -> bombAttack(httpPort, bomb, sent, answered), "flood-bomb-" + i));
                }
                attackers.forEach(Thread::start);
                for (Thread t : attackers) {
                    t.join(TimeUnit.MINUTES.toMillis(3));
                }
                // hold every connection open a little longer: what the broker buffered for them stays buffered
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
                Await.until("connections held for 3 s", Duration.ofSeconds(10), () -> System.nanoTime() - until > 0);
            } finally {
                done.countDown();
                sampler.join();
                for (Socket s : held) {
                    try {
                        s.close();
                    } catch (IOException ignored) {
                        // closing
                    }
                }
            }
            return new Result(baseline, peak.get(), cut.get(), answered.get(), sent.get(), broker.isRunning());
        }
    }

    private static void frameAttack(Socket s, int port, AtomicLong sent, AtomicInteger cut) {
        try {
            s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            OutputStream out = s.getOutputStream();
            ByteBuffer head = ByteBuffer.allocate(12);
            head.putInt(FRAME_BYTES - 4).putShort((short) 3).putShort((short) 0).putInt(1);
            out.write(head.array());
            byte[] chunk = new byte[64 << 10];
            for (int written = 0; written < BODY_SENT_BYTES; written += chunk.length) {
                out.write(chunk);
                sent.addAndGet(chunk.length);
            }
            out.flush();
        } catch (IOException e) {
            cut.incrementAndGet(); // the broker closed the connection (what a bounded broker does)
        }
    }

    private static void bombAttack(int httpPort, byte[] bomb, AtomicLong sent, AtomicInteger answered) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", httpPort), 10_000);
            s.setSoTimeout(60_000);
            String head = "POST /v1/topics/flood/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-ndjson\r\n"
                    + "Content-Encoding: gzip\r\nContent-Length: " + bomb.length + "\r\n\r\n";
            OutputStream out = s.getOutputStream();
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.write(bomb);
            out.flush();
            sent.addAndGet(bomb.length);
            if (s.getInputStream().read() >= 0) {
                answered.incrementAndGet();
            }
        } catch (IOException e) {
            // cut or timed out: counted as not answered
        }
    }

    private static byte[] gzipOfZeros(long inflated) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(bytes, 1 << 16)) {
            byte[] zeros = new byte[1 << 20];
            for (long n = 0; n < inflated; n += zeros.length) {
                gz.write(zeros);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }
}
