package io.sluice.net.client.internal;

import io.netty.buffer.ByteBuf;
import io.sluice.core.Acks;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SendCallback;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.net.protocol.Produce;
import io.sluice.net.protocol.RecordCodec;
import io.sluice.net.protocol.Wire;
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

    void encode(ByteBuf out, Acks acks) {
        out.writeByte(acks.ordinal());
        Wire.writeString(out, partition.topic());
        out.writeInt(partition.partition());
        out.writeInt(entries.size());
        for (Entry e : entries) {
            RecordCodec.writeProduced(out, e.record(), e.timestamp());
        }
    }

    @Override
    public void onResponse(ByteBuf body) {
        long[] offsets = Produce.Response.decode(body).offsets();
        if (offsets.length != entries.size()) {
            onError(new SluiceException(SluiceException.Code.INVALID_REQUEST,
                    "broker acknowledged " + offsets.length + " offsets for a batch of " + entries.size()));
            return;
        }
        for (int i = 0; i < offsets.length; i++) {
            complete(entries.get(i).callback(), offsets[i], null);
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
