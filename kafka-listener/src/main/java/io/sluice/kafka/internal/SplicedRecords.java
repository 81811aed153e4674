package io.sluice.kafka.internal;

import io.netty.buffer.ByteBuf;
import org.apache.kafka.common.record.BaseRecords;
import org.apache.kafka.common.record.RecordsSend;

/**
 * A partition's record set in a fetch response, held in pooled chunks ({@code buffer}, a composite of them) that
 * {@link RecordsFrame} splices into the frame: the generated classes ask it only for its size. It is never sent on its
 * own ({@link #toSend} is Kafka's broker's path, not the listener's).
 */
final class SplicedRecords implements BaseRecords {
    private final ByteBuf buffer;

    SplicedRecords(ByteBuf buffer) {
        this.buffer = buffer;
    }

    @Override
    public int sizeInBytes() {
        return buffer.readableBytes();
    }

    @Override
    public RecordsSend<? extends BaseRecords> toSend() {
        throw new UnsupportedOperationException("a fetch's record set travels spliced into its frame (RecordsFrame)");
    }

    @Override
    public String toString() {
        return "SplicedRecords(" + sizeInBytes() + " bytes)";
    }
}
