package io.sluice.net.client;

import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.RecordMetadata;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.net.client.internal.BlockingConnection;
import io.sluice.net.client.internal.Partitions;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.Metadata;
import io.sluice.net.protocol.Produce;
import io.sluice.records.RecordBatch;
import io.sluice.records.RecordBatchWriter;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link Producer} that does its network I/O on the calling thread: {@code send} writes the record's batch to the
 * broker and reads the acknowledgement before it returns, with no I/O thread in between. It is the client for
 * synchronous request/response work, {@code send(record).get()} one record at a time, where {@link RemoteProducer}
 * costs two thread hand-offs per round trip (caller → its event loop → caller); {@code RemoteProducer} is the
 * client for throughput (batching, linger, requests pipelined behind each other).
 * <pre>{@code
 * try (SyncProducer producer = new SyncProducer(ClientConfig.of("127.0.0.1:7070"), ProducerConfig.DEFAULT)) {
 *     RecordMetadata md = producer.send(record).join();   // already complete when send returns
 * }
 * }</pre>
 *
 * <p>Thread-safe, one request in flight: threads that share a producer take turns, a send waiting at most
 * {@link ProducerConfig#maxBlockMillis()} for the one before it (then failing with
 * {@link SluiceException.BackPressureException}); {@link #trySend} never waits and returns {@link #BACK_PRESSURED}
 * while another thread's send is on the wire. Give each sending thread its own producer for parallel requests.
 * Futures are complete and callbacks have run when a send returns. {@link ProducerConfig#lingerMicros()} and
 * {@link ProducerConfig#batchSizeBytes()} do not apply: {@link #sendBatch} sends one record batch per partition.
 *
 * <p>A failed connection fails the send that was on it with {@link SluiceException.ClosedException} (it may or may
 * not have been stored); the next send connects again. {@link ClientConfig#requestTimeoutMillis()} bounds each
 * request, from its write to the end of its answer, after which the send fails with {@code TIMEOUT} and the
 * connection is closed. The socket itself has no timeout (an untimed JDK socket read is one system call, a timed one
 * three): one daemon thread, {@code sluice-call-deadlines}, shared by the JVM's caller-thread connections while any is
 * open, closes a connection whose request passed its deadline, within a tenth of the timeout after it (at least 1 ms,
 * at most 1 s). Plaintext only: a config with TLS is refused.
 */
public final class SyncProducer implements Producer {
    /** A batch of {@link #sendBatch} is cut before it would pass this many encoded bytes (or the frame limit). */
    private static final int MAX_BATCH_BYTES = 1 << 20;
    private final ClientConfig client;
    private final ProducerConfig config;
    private final int maxBatchBytes;
    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicInteger roundRobin = new AtomicInteger();
    // guarded by lock
    private final Map<String, Integer> partitionCounts = new HashMap<>();
    private final RecordBatchWriter writer = new RecordBatchWriter();
    private BlockingConnection connection;
    private volatile boolean closed;

    public SyncProducer(String bootstrap, ProducerConfig config) {
        this(ClientConfig.of(bootstrap), config);
    }

    /** Connects at once, so a wrong address or token fails here rather than at the first send. */
    public SyncProducer(ClientConfig client, ProducerConfig config) {
        this.client = client;
        this.config = config;
        // room for the request header, topic and partition around the batch
        this.maxBatchBytes = Math.min(MAX_BATCH_BYTES, client.maxFrameSize() - 1024);
        this.connection = BlockingConnection.connect(client);
    }

    /**
     * The topic's partition count (cached after the first call; a METADATA round trip the first time).
     *
     * @throws SluiceException.UnknownTopicException if the topic does not exist
     */
    public int partitionCount(String topic) {
        lock.lock();
        try {
            return partitionCountLocked(topic);
        } finally {
            lock.unlock();
        }
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

    /** Returns {@link #BACK_PRESSURED} without waiting while another thread's send is on the wire. */
    @Override
    public long trySend(ProducerRecord record, SendCallback callback) {
        return send(record, Partitions.timestampOf(record), callback, false);
    }

    /** One PRODUCE request per topic-partition (cut at 1 MiB), in the records' order within each partition. */
    @Override
    public List<CompletableFuture<RecordMetadata>> sendBatch(List<ProducerRecord> records) {
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>(records.size());
        long[] timestamps = new long[records.size()];
        for (int i = 0; i < records.size(); i++) {
            futures.add(new CompletableFuture<>());
            timestamps[i] = Partitions.timestampOf(records.get(i));
        }
        if (records.isEmpty()) {
            return futures;
        }
        SluiceException refused = enter(true);
        if (refused != null) {
            futures.forEach(f -> f.completeExceptionally(refused));
            return futures;
        }
        int[] partitions = new int[records.size()];
        long[] offsets = new long[records.size()];
        SluiceException[] errors = new SluiceException[records.size()];
        try {
            Map<TopicPartition, List<Integer>> byPartition = new LinkedHashMap<>();
            for (int i = 0; i < records.size(); i++) {
                try {
                    partitions[i] = partitionFor(records.get(i));
                    checkSize(records.get(i));
                    byPartition.computeIfAbsent(new TopicPartition(records.get(i).topic(), partitions[i]), p -> new ArrayList<>()).add(i);
                } catch (SluiceException e) {
                    errors[i] = e;
                }
            }
            for (Map.Entry<TopicPartition, List<Integer>> e : byPartition.entrySet()) {
                List<Integer> indexes = e.getValue();
                int from = 0;
                while (from < indexes.size()) {
                    int to = cut(records, indexes, from);
                    List<Integer> slice = indexes.subList(from, to);
                    try {
                        long base = produceLocked(records, timestamps, slice, e.getKey().partition());
                        for (int k = 0; k < slice.size(); k++) {
                            offsets[slice.get(k)] = base < 0 ? -1 : base + k;
                        }
                    } catch (SluiceException error) {
                        slice.forEach(i -> errors[i] = error);
                    }
                    from = to;
                }
            }
        } finally {
            lock.unlock();
        }
        for (int i = 0; i < records.size(); i++) {
            if (errors[i] != null) {
                futures.get(i).completeExceptionally(errors[i]);
            } else {
                futures.get(i).complete(new RecordMetadata(records.get(i).topic(), partitions[i], offsets[i], timestamps[i]));
            }
        }
        return futures;
    }

    /** Nothing is buffered: returns once a send that another thread has on the wire has finished. */
    @Override
    public void flush() {
        lock.lock();
        lock.unlock();
    }

    /** Waits for a send on the wire, then disconnects; later sends fail with {@code ClosedException}. */
    @Override
    public void close() {
        closed = true;
        lock.lock();
        try {
            if (connection != null) {
                connection.close();
                connection = null;
            }
        } finally {
            lock.unlock();
        }
    }

    private long send(ProducerRecord record, long timestamp, SendCallback callback, boolean block) {
        SluiceException refused = enter(block);
        if (refused != null) {
            if (!block) {
                if (refused instanceof SluiceException.ClosedException) {
                    return CLOSED;
                }
                return BACK_PRESSURED;
            }
            callback.onCompletion(-1, -1, refused);
            return ACCEPTED;
        }
        int partition = -1;
        long offset;
        SluiceException error = null;
        try {
            checkSize(record);
            partition = partitionFor(record);
            offset = produceLocked(List.of(record), new long[]{timestamp}, List.of(0), partition);
        } catch (SluiceException e) {
            if (!block && !(e instanceof SluiceException.ClosedException) && e.code() != SluiceException.Code.TIMEOUT
                    && !(e instanceof SluiceException.BackPressureException)) {
                throw e; // trySend: errors a retry cannot fix are thrown
            }
            error = e;
            offset = -1;
        } finally {
            lock.unlock();
        }
        callback.onCompletion(partition, offset, error);
        return ACCEPTED;
    }

    /** Takes the lock (waiting up to maxBlockMillis when {@code block}); null when taken, else why not. */
    private SluiceException enter(boolean block) {
        if (closed) {
            return new SluiceException.ClosedException("producer is closed");
        }
        boolean taken;
        try {
            taken = block ? lock.tryLock(config.maxBlockMillis(), TimeUnit.MILLISECONDS) : lock.tryLock();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new SluiceException(SluiceException.Code.TIMEOUT, "interrupted while waiting for the producer");
        }
        if (!taken) {
            return new SluiceException.BackPressureException("another thread's send held the producer for "
                    + (block ? config.maxBlockMillis() + " ms (maxBlockMillis)" : "this trySend"));
        }
        if (closed) {
            lock.unlock();
            return new SluiceException.ClosedException("producer is closed");
        }
        return null;
    }

    /** Sends records {@code indexes} as one record batch to {@code partition}; returns the base offset (-1 for MEMORY). */
    private long produceLocked(List<ProducerRecord> records, long[] timestamps, List<Integer> indexes, int partition) {
        String topic = records.get(indexes.get(0)).topic();
        return connected().call(ApiKey.PRODUCE, out -> Produce.encodeBatch(out, config.acks(), topic, partition, b -> {
            int room = 0;
            for (int i : indexes) {
                room += maxRecordSize(records.get(i));
            }
            b.ensureWritable(room + RecordBatch.HEADER_SIZE);
            writer.begin(b.nioBuffer(0, b.capacity()), b.writerIndex());
            for (int i : indexes) {
                ProducerRecord r = records.get(i);
                byte[] key = r.key();
                writer.append(timestamps[i], key, key == null ? -1 : key.length, r.value(), r.value().length, r.headers());
            }
            writer.finish(0); // the broker assigns the base offset
            b.writerIndex(writer.position());
        }), body -> Produce.BatchResponse.decode(body).baseOffset());
    }

    /** The end (exclusive) of the slice of {@code indexes} from {@code from} that fits one batch; at least one record. */
    private int cut(List<ProducerRecord> records, List<Integer> indexes, int from) {
        long bytes = RecordBatch.HEADER_SIZE;
        int to = from;
        while (to < indexes.size()) {
            bytes += maxRecordSize(records.get(indexes.get(to)));
            if (bytes > maxBatchBytes && to > from) {
                break;
            }
            to++;
        }
        return to;
    }

    private BlockingConnection connected() {
        BlockingConnection c = connection;
        if (c == null || !c.isOpen()) {
            c = BlockingConnection.connect(client);
            connection = c;
        }
        return c;
    }

    private void checkSize(ProducerRecord record) {
        int size = maxRecordSize(record);
        if (size + RecordBatch.HEADER_SIZE > maxBatchBytes) {
            throw new SluiceException.RecordTooLargeException("record of " + size + " bytes does not fit one request ("
                    + maxBatchBytes + " bytes with maxFrameSize=" + client.maxFrameSize() + ")");
        }
    }

    private int partitionFor(ProducerRecord record) {
        return Partitions.choose(record, partitionCountLocked(record.topic()), config.partitioner(), roundRobin);
    }

    private int partitionCountLocked(String topic) {
        Integer n = partitionCounts.get(topic);
        if (n != null) {
            return n;
        }
        Metadata.Response r = connected().call(ApiKey.METADATA, new Metadata.Request(List.of(topic))::encode, Metadata.Response::decode);
        int count = r.topics().get(0).describedOrThrow().config().partitions();
        partitionCounts.put(topic, count);
        return count;
    }

    private static int maxRecordSize(ProducerRecord r) {
        return RecordBatchWriter.maxRecordSize(r.key() == null ? -1 : r.key().length, r.value().length, r.headers());
    }
}
