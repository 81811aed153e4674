package io.sluice.redis;

import io.lettuce.core.XAddArgs;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.sluice.core.KeyPartitioner;
import io.sluice.core.Producer;
import io.sluice.core.ProducerRecord;
import io.sluice.core.RecordMetadata;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.core.SluiceException.BackPressureException;
import io.sluice.core.SluiceException.ClosedException;
import io.sluice.core.SluiceException.RecordTooLargeException;
import io.sluice.redis.internal.EntryIds;
import io.sluice.redis.internal.StreamFields;
import io.sluice.redis.internal.TrimState;
import io.sluice.redis.internal.Trimmer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A {@link Producer} that appends each event to a Redis stream: {@code XADD <keyPrefix>{<topic>}:<partition> * v
 * <value> [k <key>] [ts <ms>] [h.<name> <value>]...} (see {@link RedisStreamsConfig} for the key layout). Thread-safe.
 *
 * <p><b>Pipelining.</b> Every send is written to one Lettuce connection without waiting for earlier replies. With
 * {@code lingerMillis = 0} each send is flushed at once (lowest latency; Lettuce's Netty event loop coalesces what
 * several threads flush together); with a linger (one server only: on a cluster every send is flushed at once), sends
 * wait in the pipeline until {@code batchSize} are waiting or the linger elapses, and go out in one write. At most {@code maxInFlight} XADDs are unacknowledged: {@code send}
 * waits up to {@code maxBlockMillis} for a slot and then fails with {@link BackPressureException}; {@code trySend}
 * returns {@link #BACK_PRESSURED} at once.
 *
 * <p><b>Acknowledgement.</b> A send completes when Redis has replied to its XADD with the entry id; the
 * {@link RecordMetadata#offset()} is that id as an offset (see {@code EntryIds}). How durable that is, is Redis's
 * persistence setting: with {@code appendfsync always} an acknowledged entry survives a crash of Redis
 * ({@code RedisRestartTest}); with {@code everysec} up to a second of acknowledged entries can be lost. A send that
 * fails with a timeout or a dropped connection may still have been appended (Lettuce re-sends after reconnecting):
 * delivery is at-least-once.
 *
 * <p><b>Trimming.</b> With {@code trimMaxLength} or {@code trimMaxAge}, a timer thread trims the streams this
 * producer wrote to, never past the oldest entry a consumer group has not acknowledged ({@code Trimmer}), unless
 * {@code trimUnacknowledged} opts in to Redis's plain {@code XADD MAXLEN ~}.
 *
 * <p>Callbacks run on Lettuce's I/O thread, in the order Redis replied (per connection: the send order). Keep them short.
 */
public final class RedisStreamsProducer implements Producer {
    private static final Logger LOG = LoggerFactory.getLogger(RedisStreamsProducer.class);

    private final RedisStreamsConfig config;
    private final RedisEndpoint endpoint;
    private final RedisEndpoint.Link connection;
    private final RedisClusterAsyncCommands<byte[], byte[]> redis;
    /** Sends wait in the pipeline for {@code lingerMillis} / {@code batchSize} (never on a cluster). */
    private final boolean lingers;
    private final XAddArgs inlineTrim;
    private final Trimmer trimmer;
    private final ScheduledExecutorService timer;
    private final Semaphore inFlight;
    private final AtomicLong issued = new AtomicLong();
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicInteger unflushed = new AtomicInteger();
    private final AtomicBoolean lingerScheduled = new AtomicBoolean();
    private final AtomicInteger roundRobin = new AtomicInteger();
    private final Map<String, Stream[]> streams = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    public RedisStreamsProducer(RedisStreamsConfig config) {
        this.config = config;
        this.endpoint = new RedisEndpoint(config, "producer", true);
        this.connection = endpoint.connect();
        // On a cluster every send is flushed at once: the client re-sends an XADD redirected by MOVED/ASK through this
        // connection, which would hold it until some later flush (Netty's flush consolidation still batches under load).
        this.lingers = config.lingerMillis() > 0 && !config.cluster();
        connection.connection().setAutoFlushCommands(!lingers);
        this.redis = connection.async();
        this.inFlight = new Semaphore(config.maxInFlight());
        boolean inline = config.trimUnacknowledged() && config.trimMaxLength() > 0 && config.trimMaxAge() == null;
        this.inlineTrim = inline ? new XAddArgs().maxlen(config.trimMaxLength()).approximateTrimming(true) : null;
        boolean trims = config.trims() && !inline;
        if (lingers || trims) {
            timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "sluice-redis-producer-timer");
                t.setDaemon(true);
                return t;
            });
        } else {
            timer = null;
        }
        if (trims) {
            RedisEndpoint.Link trimLink = endpoint.connect();
            trimmer = new Trimmer(config, trimLink.sync(), trimLink::close, System::currentTimeMillis);
            timer.scheduleWithFixedDelay(trimmer::run, config.trimIntervalMillis(), config.trimIntervalMillis(), TimeUnit.MILLISECONDS);
        } else {
            trimmer = null;
        }
    }

    @Override
    public CompletableFuture<RecordMetadata> send(ProducerRecord record) {
        CompletableFuture<RecordMetadata> f = new CompletableFuture<>();
        String topic = record.topic();
        long timestamp = record.timestamp();
        send(record, (partition, offset, error) -> {
            if (error != null) {
                f.completeExceptionally(error);
            } else {
                f.complete(new RecordMetadata(topic, partition, offset,
                        timestamp == ProducerRecord.NO_TIMESTAMP ? EntryIds.millis(offset) : timestamp));
            }
        });
        return f;
    }

    @Override
    public void send(ProducerRecord record, SendCallback callback) {
        int partition;
        try {
            partition = validate(record);
        } catch (SluiceException e) {
            callback.onCompletion(-1, -1, e);
            return;
        }
        try {
            if (!inFlight.tryAcquire(config.maxBlockMillis(), TimeUnit.MILLISECONDS)) {
                callback.onCompletion(partition, -1, new BackPressureException(config.maxInFlight()
                        + " XADDs in flight (maxInFlight) for longer than maxBlockMillis=" + config.maxBlockMillis()));
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            callback.onCompletion(partition, -1, new SluiceException(SluiceException.Code.UNKNOWN, "interrupted while waiting for an in-flight slot", e));
            return;
        }
        append(record, partition, callback);
    }

    @Override
    public long trySend(ProducerRecord record, SendCallback callback) {
        if (closed.get()) {
            return CLOSED;
        }
        int partition = validate(record);
        if (!inFlight.tryAcquire()) {
            return BACK_PRESSURED;
        }
        append(record, partition, callback);
        return ACCEPTED;
    }

    @Override
    public List<CompletableFuture<RecordMetadata>> sendBatch(List<ProducerRecord> records) {
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>(records.size());
        for (ProducerRecord r : records) {
            futures.add(send(r));
        }
        return futures;
    }

    /** Validates and picks the partition; throws the typed error that retrying cannot fix. */
    private int validate(ProducerRecord record) {
        if (closed.get()) {
            throw new ClosedException("producer closed");
        }
        int size = StreamFields.size(record);
        if (size > config.maxEventBytes()) {
            throw new RecordTooLargeException("event of " + size + " bytes exceeds maxEventBytes=" + config.maxEventBytes());
        }
        Integer p = record.partition();
        int partitions = config.partitions();
        if (p != null) {
            if (p < 0 || p >= partitions) {
                throw new SluiceException(SluiceException.Code.INVALID_REQUEST, "partition " + p + " of topic '" + record.topic()
                        + "' does not exist (partitions=" + partitions + ")");
            }
            return p;
        }
        if (partitions == 1) {
            return 0;
        }
        if (record.key() != null) {
            return KeyPartitioner.partition(record.key(), partitions);
        }
        return Math.floorMod(roundRobin.getAndIncrement(), partitions);
    }

    /** Called holding one in-flight permit. */
    private void append(ProducerRecord record, int partition, SendCallback callback) {
        Stream stream = stream(record.topic(), partition);
        byte[] key = stream.key();
        TrimState trim = stream.trim();
        Object[] fields = StreamFields.encode(record);
        issued.incrementAndGet();
        var future = inlineTrim == null ? redis.xadd(key, fields) : redis.xadd(key, inlineTrim, fields);
        future.whenComplete((id, error) -> {
            long offset = -1;
            Throwable err = error;
            if (err == null) {
                try {
                    offset = EntryIds.toOffset(id);
                    if (trim != null) {
                        trim.appended(offset);
                    }
                } catch (RuntimeException e) {
                    err = e;
                }
            }
            if (err != null) {
                failed.incrementAndGet();
            }
            inFlight.release();
            completed.incrementAndGet();
            try {
                callback.onCompletion(partition, offset, err == null ? null : wrap(err));
            } catch (RuntimeException e) {
                LOG.error("send callback threw", e);
            }
        });
        if (lingers) {
            if (unflushed.incrementAndGet() >= config.batchSize()) {
                flushPipeline();
            } else if (lingerScheduled.compareAndSet(false, true)) {
                timer.schedule(this::lingerExpired, config.lingerMillis(), TimeUnit.MILLISECONDS);
            }
        }
    }

    private static SluiceException wrap(Throwable t) {
        if (t instanceof SluiceException s) {
            return s;
        }
        if (t instanceof io.lettuce.core.RedisCommandTimeoutException) {
            return new SluiceException(SluiceException.Code.TIMEOUT, "XADD not acknowledged in time (it may still have been appended): " + t.getMessage(), t);
        }
        return new SluiceException(SluiceException.Code.UNKNOWN, "XADD failed (it may still have been appended): " + t, t);
    }

    private void lingerExpired() {
        lingerScheduled.set(false);
        flushPipeline();
    }

    private void flushPipeline() {
        if (unflushed.getAndSet(0) > 0) {
            connection.connection().flushCommands();
        }
    }

    /** A stream this producer writes to: its key bytes and, when trimming, what the trimmer knows of it. */
    private record Stream(byte[] key, TrimState trim) {
    }

    private Stream stream(String topic, int partition) {
        Stream[] s = streams.get(topic);
        if (s == null) {
            s = streams.computeIfAbsent(topic, t -> {
                Stream[] all = new Stream[config.partitions()];
                for (int p = 0; p < all.length; p++) {
                    String key = config.streamKey(t, p);
                    all[p] = new Stream(key.getBytes(StandardCharsets.UTF_8), trimmer == null ? null : trimmer.stream(key));
                }
                return all;
            });
        }
        return s[partition];
    }

    /**
     * Flushes the pipeline and waits until every send issued before this call is acknowledged or failed (bounded by
     * {@code commandTimeoutMillis + maxBlockMillis}; then throws a TIMEOUT {@link SluiceException}).
     */
    @Override
    public void flush() {
        long target = issued.get();
        flushPipeline();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.commandTimeoutMillis() + Math.min(config.maxBlockMillis(), 60_000));
        // replies complete in issue order on one connection; polling here is the rare, caller-requested path
        while (completed.get() < target) {
            if (System.nanoTime() > deadline) {
                throw new SluiceException(SluiceException.Code.TIMEOUT, "flush: " + (target - completed.get()) + " XADDs still unacknowledged");
            }
            LockSupport.parkNanos(50_000);
        }
    }

    /** Sends that failed so far (their callbacks got the error). */
    public long failedSends() {
        return failed.get();
    }

    /** Trimmer passes run so far (0 when this producer does not trim or trims inline). */
    public long trimRuns() {
        return trimmer == null ? 0 : trimmer.runs();
    }

    /** Entries removed by this producer's trimmer. */
    public long trimmedEntries() {
        return trimmer == null ? 0 : trimmer.trimmedEntries();
    }

    /** Trim passes that stopped short of the wanted cut because a group had not acknowledged older entries. */
    public long trimsHeldByGroups() {
        return trimmer == null ? 0 : trimmer.heldByGroups();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            flush();
        } catch (SluiceException e) {
            LOG.warn("closing with unacknowledged sends: {}", e.getMessage());
        } finally {
            if (timer != null) {
                timer.shutdownNow();
                try {
                    timer.awaitTermination(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (trimmer != null) {
                trimmer.close();
            }
            connection.close();
            endpoint.close();
        }
    }
}
