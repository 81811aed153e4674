package io.sluice.net.client.internal;

import io.netty.buffer.ByteBuf;
import io.sluice.core.Acks;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.net.protocol.Produce;
import io.sluice.net.protocol.RecordBatchWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/** Records for one partition that travel in one PRODUCE request. Confined to the producer's event loop. */
final class ProducerBatch implements ResponseSink {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerBatch.class);

    /** A record accepted by {@code send}, with its partition and timestamp resolved. */
    record Entry(ProducerRecord record, int partition, long timestamp, int size, SendCallback callback) {
    }

    final TopicPartition partition;
    final long createdNanos;
    final List<Entry> entries = new ArrayList<>();
    int bytes;
    long sentNanos;
    private List<FlushMarker> markers;
    private final ProducerSender sender;

    ProducerBatch(ProducerSender sender, TopicPartition partition, long now) {
        this.sender = sender;
        this.partition = partition;
        this.createdNanos = now;
    }

    void add(Entry e) {
        entries.add(e);
        bytes += e.size();
    }

    void addMarker(FlushMarker m) {
        if (markers == null) {
            markers = new ArrayList<>(2);
        }
        markers.add(m);
    }

    /** Writes the PRODUCE v1 body: this batch's records as one record batch the broker stores as it is. */
    void encode(ByteBuf out, Acks acks, RecordBatchWriter writer) {
        Produce.encodeBatch(out, acks, partition.topic(), partition.partition(), buf -> {
            writer.begin(buf, entries.get(0).timestamp());
            for (int i = 0, n = entries.size(); i < n; i++) {
                Entry e = entries.get(i);
                writer.append(e.timestamp(), e.record().key(), e.record().value(), e.record().headers());
            }
            writer.finish();
        });
    }

    @Override
    public void onResponse(ByteBuf body) {
        long base = Produce.BatchResponse.decode(body).baseOffset();
        for (int i = 0, n = entries.size(); i < n; i++) {
            complete(entries.get(i).callback(), base < 0 ? -1 : base + i, null);
        }
        sender.finished(this, null);
    }

    @Override
    public void onError(SluiceException error) {
        for (Entry e : entries) {
            complete(e.callback(), -1, error);
        }
        sender.finished(this, error);
    }

    /** Fails a batch that was never sent. */
    void fail(SluiceException error) {
        for (Entry e : entries) {
            complete(e.callback(), -1, error);
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
