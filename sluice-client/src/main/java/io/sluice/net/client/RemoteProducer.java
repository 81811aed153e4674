package io.sluice.net.client;

import io.sluice.core.ProducerConfig;
import io.sluice.core.Producer;
import io.sluice.core.ProducerRecord;
import io.sluice.core.RecordMetadata;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.net.client.internal.BufferMemory;
import io.sluice.net.client.internal.Connector;
import io.sluice.net.client.internal.ProducerSender;
import io.sluice.net.client.internal.Partitions;
import io.sluice.records.RecordBatchWriter;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link Producer} that sends to a Sluice broker over the network: the same interface as the embedded producer,
 * so switching is a change of constructor:
 * <pre>{@code
 * Producer producer = broker.newProducer(ProducerConfig.DEFAULT);                       // embedded
 * Producer producer = new RemoteProducer("127.0.0.1:7070", ProducerConfig.DEFAULT);     // networked
 * }</pre>
 *
 * <p>Thread-safe. {@code send} resolves the partition (fetching the topic's partition count once, blocking), takes
 * buffer memory (blocking up to {@link ProducerConfig#maxBlockMillis()} when {@code bufferMemoryBytes} are held,
 * then failing with {@link SluiceException.BackPressureException}) and queues the record for the producer's I/O
 * thread, which batches per partition (see {@link RemoteProducerConfig}). Callbacks and futures complete on that
 * I/O thread in send order per partition: keep them short.
 *
 * <p>Connection loss fails the records in flight with {@link SluiceException.ClosedException} (they may or may not
 * have been stored); the next {@code send} reconnects.
 */
public final class RemoteProducer implements Producer {
    private final RemoteProducerConfig config;
    private final Connector connector;
    private final BufferMemory memory;
    private final ProducerSender sender;
    private final AtomicInteger roundRobin = new AtomicInteger();
    /** Sends between their closed-check and their enqueue; close waits for them so none is stranded. */
    private final AtomicInteger sendsInProgress = new AtomicInteger();
    private volatile boolean closed;
    /** Set once close() flushed: the I/O thread is gone, so flush() has nothing left to wait for. */
    private volatile boolean terminated;

    public RemoteProducer(String bootstrap, ProducerConfig config) {
        this(RemoteProducerConfig.builder(ClientConfig.of(bootstrap)).producer(config).build());
    }

    /** Connects at once (so a wrong address fails here, not at the first send). */
    public RemoteProducer(RemoteProducerConfig config) {
        this.config = config;
        this.connector = new Connector(config.client(), "producer");
        this.memory = new BufferMemory(config.bufferMemoryBytes());
        this.sender = new ProducerSender(connector.eventLoop(), config.producer().acks(), config.batchSizeBytes(),
                config.lingerMicros(), config.maxInFlightRequests(), config.client().requestTimeoutMillis(), memory,
                connector::current);
        try {
            connector.connected();
        } catch (RuntimeException e) {
            connector.close();
            throw e;
        }
    }

    public RemoteProducerConfig config() {
        return config;
    }

    /**
     * The topic's partition count (cached after the first call; blocks for a METADATA request the first time).
     *
     * @throws SluiceException.UnknownTopicException if the topic does not exist
     */
    public int partitionCount(String topic) {
        connector.connected();
        return connector.partitionCount(topic);
    }

    /** Bytes of records currently held (queued, batched or awaiting acknowledgement). */
    public long bufferedBytes() {
        return memory.used();
    }

    @Override
    public CompletableFuture<RecordMetadata> send(ProducerRecord record) {
        CompletableFuture<RecordMetadata> future = new CompletableFuture<>();
        long timestamp = Partitions.timestampOf(record);
        send(record, timestamp, Partitions.completing(future, record.topic(), timestamp), true);
        return future;
    }

    @Override
    public void send(ProducerRecord record, SendCallback callback) {
        send(record, Partitions.timestampOf(record), callback, true);
    }

    /**
     * Never waits for buffer memory (the first send to a topic may still wait for its partition count).
     */
    @Override
    public long trySend(ProducerRecord record, SendCallback callback) {
        return send(record, Partitions.timestampOf(record), callback, false);
    }

    @Override
    public List<CompletableFuture<RecordMetadata>> sendBatch(List<ProducerRecord> records) {
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>(records.size());
        for (ProducerRecord r : records) {
            futures.add(send(r));
        }
        return futures;
    }

    private long send(ProducerRecord record, long timestamp, SendCallback callback, boolean block) {
        sendsInProgress.incrementAndGet();
        try {
            if (closed) {
                if (!block) {
                    return CLOSED;
                }
                callback.onCompletion(-1, -1, new SluiceException.ClosedException("producer is closed"));
                return CLOSED;
            }
            // what the record takes in its record batch, at most: buffer memory and batch size count encoded bytes
            int size = RecordBatchWriter.maxRecordSize(record.key() == null ? -1 : record.key().length,
                    record.value().length, record.headers());
            int partition;
            try {
                if (size > config.maxRecordBytes()) {
                    throw new SluiceException.RecordTooLargeException("record of " + size + " bytes exceeds maxRecordBytes="
                            + config.maxRecordBytes());
                }
                connector.connected();
                partition = partitionFor(record);
                if (block) {
                    memory.acquire(size, config.producer().maxBlockMillis());
                } else if (!memory.tryAcquire(size)) {
                    return BACK_PRESSURED;
                }
            } catch (SluiceException e) {
                if (!block) {
                    throw e;
                }
                callback.onCompletion(-1, -1, e);
                return ACCEPTED;
            }
            sender.append(record, partition, timestamp, size, callback);
            return ACCEPTED;
        } finally {
            sendsInProgress.decrementAndGet();
        }
    }

    private int partitionFor(ProducerRecord record) {
        return Partitions.choose(record, connector.partitionCount(record.topic()), config.producer().partitioner(), roundRobin);
    }

    @Override
    public void flush() {
        if (terminated) {
            return;
        }
        try {
            sender.flushMarker().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SluiceException(SluiceException.Code.TIMEOUT, "interrupted while flushing");
        } catch (ExecutionException e) {
            throw new SluiceException(SluiceException.Code.UNKNOWN, "flush failed: " + e.getCause(), e.getCause());
        }
    }

    /** Stops accepting sends, waits until everything accepted was acknowledged or failed, then disconnects. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        while (sendsInProgress.get() > 0) {
            Thread.onSpinWait();
        }
        flush();
        terminated = true;
        connector.close();
    }
}
