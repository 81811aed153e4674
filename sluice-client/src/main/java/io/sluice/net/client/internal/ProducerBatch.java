package io.sluice.net.client.internal;

import io.netty.buffer.ByteBuf;
import io.sluice.core.Acks;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.net.protocol.Produce;
import io.sluice.records.RecordBatchWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Records for one partition that travel in one PRODUCE v1 request, encoded as they are added into the record batch
 * the broker will store (Kafka RecordBatch v2, {@link RecordBatchWriter}). Built under the sender's lock by the
 * application threads that send ({@link #add}, {@link #close}); once closed it belongs to the producer's event loop,
 * which sends it and completes its callbacks.
 */
final class ProducerBatch implements ResponseSink {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerBatch.class);
    final TopicPartition partition;
    final long createdNanos;
    /** Buffer-memory bytes of the records ({@link RecordBatchWriter#maxRecordSize} each), released when the batch is done. */
    int bytes;
    long sentNanos;
    private final RecordBatchWriter writer = new RecordBatchWriter();
    private ByteBuf records;
    private SendCallback[] callbacks;
    private int count;
    private List<FlushMarker> markers;
    private final ProducerSender sender;

    /**
     * @param records       an empty heap buffer to encode into (the sender's, reused from batches already sent)
     * @param expectedCount records the batch will probably hold (the previous batch's count): sizes the callback array
     */
    ProducerBatch(ProducerSender sender, TopicPartition partition, long now, ByteBuf records, int expectedCount) {
        this.sender = sender;
        this.callbacks = new SendCallback[Math.max(16, expectedCount)];
        this.partition = partition;
        this.createdNanos = now;
        this.records = records;
        // the writer works on a view of the buffer's memory, indexed as the buffer is
        writer.begin(records.nioBuffer(0, records.capacity()), records.writerIndex());
    }

    /** Encodes one record into the batch (sender's lock). */
    void add(ProducerRecord record, long timestamp, int size, SendCallback callback) {
        byte[] key = record.key();
        int keyLength = key == null ? -1 : key.length;
        int room = RecordBatchWriter.maxRecordSize(keyLength, record.value().length, record.headers());
        if (writer.remaining() < room) {
            records.writerIndex(writer.position());
            records.ensureWritable(room);
            writer.moveTo(records.nioBuffer(0, records.capacity()));
        }
        writer.append(timestamp, key, keyLength, record.value(), record.value().length, record.headers());
        records.writerIndex(writer.position());
        if (count == callbacks.length) {
            callbacks = Arrays.copyOf(callbacks, count * 2);
        }
        callbacks[count++] = callback;
        bytes += size;
    }

    /** No record joins after this: fills in the batch header and CRC (sender's lock). */
    void close() {
        writer.finish(0); // the broker assigns the base offset
    }

    int recordCount() {
        return count;
    }

    int encodedSize() {
        return records.readableBytes();
    }

    void addMarker(FlushMarker m) {
        if (markers == null) {
            markers = new ArrayList<>(2);
        }
        markers.add(m);
    }

    /** Writes the PRODUCE v1 body (a copy of the encoded batch) and gives the batch's buffer back for reuse. Event loop. */
    void encode(ByteBuf out, Acks acks) {
        ByteBuf r = records;
        records = null;
        try {
            Produce.encodeBatch(out, acks, partition.topic(), partition.partition(), b -> b.writeBytes(r, r.readerIndex(), r.readableBytes()));
        } finally {
            sender.giveBack(r);
        }
    }

    @Override
    public void onResponse(ByteBuf body) {
        long base = Produce.BatchResponse.decode(body).baseOffset();
        for (int i = 0; i < count; i++) {
            complete(callbacks[i], base < 0 ? -1 : base + i, null);
        }
        sender.finished(this, null);
    }

    @Override
    public void onError(SluiceException error) {
        fail(error);
        sender.finished(this, error);
    }

    /** Fails every record of the batch (sent or not) and gives its buffer back. */
    void fail(SluiceException error) {
        if (records != null) {
            sender.giveBack(records);
            records = null;
        }
        for (int i = 0; i < count; i++) {
            complete(callbacks[i], -1, error);
        }
    }

    void releaseMarkers() {
        if (markers != null) {
            for (FlushMarker m : markers) {
                m.batchDone();
            }
            markers = null;
        }
    }

    private void complete(SendCallback callback, long offset, Throwable error) {
        try {
            callback.onCompletion(partition.partition(), offset, error);
        } catch (RuntimeException e) {
            LOG.warn("send callback threw; continuing", e);
        }
    }
}
