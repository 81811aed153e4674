package io.sluice.kafka.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.FetchResponseData.FetchableTopicResponse;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.BaseRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A fetch response whose record sets travel in their own buffers (each a composite of pooled chunks, as the listener's
 * fetch leaves them) is, byte for byte, the frame the generated classes write with the records copied in; at every Fetch version the listener answers, with partitions that have records,
 * none, or an error between them. The record buffers are the frame's own (not copied), and a mismatch frees them.
 */
class RecordsFrameTest {
    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    private static final Uuid TOPIC_A = Uuid.randomUuid();
    private static final Uuid TOPIC_B = Uuid.randomUuid();

    private static MemoryRecords records(int base, int count) {
        SimpleRecord[] rs = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            rs[i] = new SimpleRecord(1_000L + i, ("k" + i).getBytes(StandardCharsets.UTF_8),
                    ("value-" + (base + i)).getBytes(StandardCharsets.UTF_8));
        }
        return MemoryRecords.withRecords(base, Compression.NONE, rs);
    }

    /** The records' bytes in a pooled direct buffer. */
    private static ByteBuf pooled(MemoryRecords r) {
        ByteBuf b = ALLOC.directBuffer(r.sizeInBytes());
        b.writeBytes(r.buffer().duplicate());
        return b;
    }

    /** The records' bytes in two pooled chunks of a composite, as FetchHandler's {@code ChunkedBatchSink} leaves them. */
    private static ByteBuf chunked(MemoryRecords r) {
        ByteBuffer bytes = r.buffer().duplicate();
        int half = bytes.remaining() / 2;
        ByteBuf first = ALLOC.directBuffer(half);
        first.writeBytes(bytes.duplicate().limit(bytes.position() + half));
        ByteBuf second = ALLOC.directBuffer(bytes.remaining() - half);
        second.writeBytes(bytes.position(bytes.position() + half));
        return ALLOC.compositeDirectBuffer(Integer.MAX_VALUE).addComponent(true, first).addComponent(true, second);
    }

    /** Three partitions with records, one empty and one with an error between them, in two topics. */
    private static FetchResponseData response(List<? extends BaseRecords> sets, short version) {
        FetchResponseData data = new FetchResponseData().setErrorCode(Errors.NONE.code()).setSessionId(0);
        FetchableTopicResponse a = new FetchableTopicResponse().setTopic("a").setTopicId(version >= 13 ? TOPIC_A : Uuid.ZERO_UUID);
        FetchableTopicResponse b = new FetchableTopicResponse().setTopic("b").setTopicId(version >= 13 ? TOPIC_B : Uuid.ZERO_UUID);
        data.responses().add(a);
        data.responses().add(b);
        a.partitions().add(partition(0, sets.get(0), version));
        a.partitions().add(partition(1, MemoryRecords.EMPTY, version));
        a.partitions().add(partition(2, sets.get(1), version));
        b.partitions().add(partition(0, MemoryRecords.EMPTY, version).setErrorCode(Errors.OFFSET_OUT_OF_RANGE.code()));
        b.partitions().add(partition(1, sets.get(2), version));
        return data;
    }

    private static PartitionData partition(int index, BaseRecords records, short version) {
        PartitionData p = new PartitionData().setPartitionIndex(index).setHighWatermark(100).setLastStableOffset(100)
                .setAbortedTransactions(null).setPreferredReadReplica(-1).setRecords(records);
        if (version >= 5) {
            p.setLogStartOffset(0);
        }
        return p;
    }

    @Test
    void aFrameWithRecordsInTheirOwnBuffersIsTheFrameOfTheGeneratedClassesAtEveryVersion() {
        List<MemoryRecords> sets = List.of(records(0, 3), records(10, 1), records(40, 7));
        // the listener answers Fetch 4-12 (ProduceFetchApis); the later versions are checked as well
        for (short version = 4; version <= ApiKeys.FETCH.latestVersion(); version++) {
            short headerVersion = ApiKeys.FETCH.responseHeaderVersion(version);
            ByteBuf expected = KafkaRequest.encode(ALLOC, 77, headerVersion, response(sets, version), version);

            List<ByteBuf> buffers = new ArrayList<>();
            List<BaseRecords> views = new ArrayList<>();
            for (MemoryRecords r : sets) {
                ByteBuf b = chunked(r);
                buffers.add(b);
                views.add(new SplicedRecords(b));
            }
            ByteBuf frame = RecordsFrame.encode(ALLOC, 77, headerVersion, response(views, version), version, buffers);
            try {
                assertThat(ByteBufUtil.getBytes(frame)).as("Fetch v%d", version).isEqualTo(ByteBufUtil.getBytes(expected));
                for (ByteBuf b : buffers) {
                    assertThat(b.refCnt()).as("a record buffer is the frame's, not copied").isEqualTo(1);
                }
            } finally {
                frame.release();
                expected.release();
            }
            for (ByteBuf b : buffers) {
                assertThat(b.refCnt()).as("released with the frame").isZero();
            }
        }
    }

    @Test
    void recordBuffersThatDoNotMatchTheResponseFailTheEncodingAndAreFreed() {
        short version = ApiKeys.FETCH.latestVersion();
        short headerVersion = ApiKeys.FETCH.responseHeaderVersion(version);
        List<MemoryRecords> sets = List.of(records(0, 3), records(10, 1), records(40, 7));
        List<ByteBuf> buffers = new ArrayList<>(List.of(pooled(sets.get(0)), pooled(sets.get(1))));
        buffers.add(ALLOC.directBuffer(8).writeLong(1)); // not the third record set
        assertThatThrownBy(() -> RecordsFrame.encode(ALLOC, 1, headerVersion, response(sets, version), version, buffers))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("record set 2");
        for (ByteBuf b : buffers) {
            assertThat(b.refCnt()).isZero();
        }
    }

    @Test
    void aResponseWithoutRecordsIsTheFrameOfTheGeneratedClasses() {
        short version = ApiKeys.FETCH.latestVersion();
        FetchResponseData empty = new FetchResponseData().setErrorCode(Errors.NONE.code()).setSessionId(0);
        ByteBuf frame = RecordsFrame.encode(ALLOC, 5, ApiKeys.FETCH.responseHeaderVersion(version), empty, version, List.of());
        ByteBuf expected = KafkaRequest.encode(ALLOC, 5, ApiKeys.FETCH.responseHeaderVersion(version), empty, version);
        try {
            assertThat(ByteBufUtil.getBytes(frame)).isEqualTo(ByteBufUtil.getBytes(expected));
            assertThat(ByteBuffer.wrap(ByteBufUtil.getBytes(frame)).getInt()).as("length prefix").isEqualTo(frame.readableBytes() - 4);
        } finally {
            frame.release();
            expected.release();
        }
    }
}
