package io.sluice.net.http.internal;

import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.internal.BrokerFront;
import io.sluice.net.http.HttpApiConfig;
import io.sluice.net.metrics.MetricsRegistry;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * What every connection of one HTTP listener shares: the broker, one producer per durability level, the NDJSON
 * validator, settings and counters. Thread-safe (producers are thread-safe; the rest is immutable or atomic).
 */
public final class HttpApi implements AutoCloseable {
    final Broker broker;
    /** The broker's network front (null for a broker that is not broker-core's): journals acks=journal sends here. */
    final BrokerFront front;
    final HttpApiConfig config;
    final HttpMetrics metrics;
    final NdjsonValidator validator;
    final MetricsRegistry registry;
    /** Health of other components (ingest pipelines), or null. */
    final Supplier<Map<String, io.sluice.net.http.HealthRegistry.Health>> health;
    private final EnumMap<Acks, Producer> producers = new EnumMap<>(Acks.class);
    /** Set once by the closing thread; I/O threads then answer new requests 503. */
    private volatile boolean closing;
    /** Produce requests started and not yet answered; {@link #drain} waits for it to reach zero. */
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Object drained = new Object();
    /** Topic creations waiting for the admin thread at most; beyond, {@code 503}. */
    static final int MAX_ADMIN_QUEUE = 64;
    /**
     * One thread ({@code sluice-http-admin}) for calls that create files (topic creation), so they never run on an I/O
     * event loop; its queue is bounded by {@link #MAX_ADMIN_QUEUE}.
     */
    final java.util.concurrent.ExecutorService admin = new java.util.concurrent.ThreadPoolExecutor(1, 1, 0,
            TimeUnit.MILLISECONDS, new java.util.concurrent.ArrayBlockingQueue<>(MAX_ADMIN_QUEUE), r -> {
                Thread t = new Thread(r, "sluice-http-admin");
                t.setDaemon(true);
                return t;
            });

    public HttpApi(Broker broker, HttpApiConfig config, HttpMetrics metrics, MetricsRegistry registry) {
        this(broker, config, metrics, registry, null);
    }

    public HttpApi(Broker broker, HttpApiConfig config, HttpMetrics metrics, MetricsRegistry registry,
                   Supplier<Map<String, io.sluice.net.http.HealthRegistry.Health>> health) {
        this.health = health;
        this.broker = broker;
        this.front = broker instanceof BrokerFront f ? f : null;
        this.config = config;
        this.metrics = metrics;
        this.registry = registry;
        this.validator = new NdjsonValidator(config.maxLineBytes(), config.maxJsonDepth());
        for (Acks acks : Acks.values()) {
            // maxBlockMillis 0: the HTTP handler only uses trySend and does its own bounded waiting off-thread
            producers.put(acks, broker.newProducer(ProducerConfig.builder().acks(acks).maxBlockMillis(0).build()));
        }
    }

    Producer producer(Acks acks) {
        return producers.get(acks);
    }

    boolean closing() {
        return closing;
    }

    void requestStarted() {
        inFlight.incrementAndGet();
    }

    /** Called exactly once per started request, by whichever thread answered it. */
    void requestAnswered() {
        if (inFlight.decrementAndGet() == 0 && closing) {
            synchronized (drained) {
                drained.notifyAll();
            }
        }
    }

    /**
     * Starts closing: requests arriving from now on get {@code 503}, requests waiting for room on a full ring stop
     * waiting and get {@code 503}. Returns once every produce request in progress has been answered (its answer is
     * queued on its connection, ahead of any close) or after {@code timeoutMillis}, then flushes the producers.
     *
     * @return the number of requests still unanswered at the deadline (0 normally)
     */
    public int drain(long timeoutMillis) {
        closing = true;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        synchronized (drained) {
            long left;
            while (inFlight.get() > 0 && (left = deadline - System.nanoTime()) > 0) {
                try {
                    TimeUnit.NANOSECONDS.timedWait(drained, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        for (Producer p : producers.values()) {
            p.flush();
        }
        return inFlight.get();
    }

    /**
     * Finishes the topic creations already accepted (up to 5 s), then flushes and closes the producers (waits for
     * every accepted event's acknowledgement). Not the broker.
     */
    @Override
    public void close() {
        admin.shutdown();
        try {
            if (!admin.awaitTermination(5, TimeUnit.SECONDS)) {
                admin.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Producer p : producers.values()) {
            p.close();
        }
    }
}
