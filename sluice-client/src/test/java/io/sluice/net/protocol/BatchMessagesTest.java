package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.core.Acks;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.Header;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.records.RecordBatch;
import io.sluice.records.RecordBatchChecker;
import io.sluice.records.RecordBatchWriter;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * PRODUCE and FETCH around record batches, as the protocol sees them: a request carries one batch the broker checks
 * with record-batch's {@link RecordBatchChecker} (what it refuses is a {@link ProtocolException}, INVALID_REQUEST,
 * saying what is wrong; an oversized record is RECORD_TOO_LARGE), and a response's batches decode to the records from
 * the offset asked for, a damaged first batch being CORRUPT_RECORD with the offsets. The codec's own rules and its
 * agreement with Kafka's bytes are specified in record-batch's tests.
 */
class BatchMessagesTest {
    private static final int MAX_EVENT_SIZE = 1 << 20;

    static List<ProducerRecord> records(long base, int count) {
        List<ProducerRecord> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            long n = base + i;
            byte[] key = n % 2 == 0 ? null : ("k" + n).getBytes(StandardCharsets.UTF_8);
            byte[] value = ("value-" + n).getBytes(StandardCharsets.UTF_8);
            List<Header> headers = n % 3 == 0 ? List.of(Header.of("é" + n, "h" + n)) : List.of();
            out.add(new ProducerRecord("t", 0, key, value, headers, 5_000 + n));
        }
        return out;
    }

    /** One batch of {@code records} with base offset {@code base}. */
    static byte[] batch(long base, List<ProducerRecord> records) {
        ByteBuffer b = ByteBuffer.allocate(1 << 16);
        RecordBatchWriter w = new RecordBatchWriter();
        w.begin(b, 0);
        for (ProducerRecord r : records) {
            w.append(r.timestamp(), r.key(), r.key() == null ? -1 : r.key().length, r.value(), r.value().length, r.headers());
        }
        return Arrays.copyOf(b.array(), w.finish(base));
    }

    /** A whole request body for {@code records} (acks JOURNAL, topic "topic", partition 1). */
    static void request(ByteBuf out, List<ProducerRecord> records) {
        Produce.encodeBatch(out, Acks.JOURNAL, "topic", 1, b -> b.writeBytes(batch(0, records)));
    }

    /** Recomputes the CRC32C of the batch at {@code start} in {@code in}, if its framing fits the buffer. */
    static void recrc(ByteBuf in, int start) {
        if (start > in.writerIndex()) {
            return;
        }
        RecordBatch batch = new RecordBatch().wrap(in.nioBuffer(start, in.writerIndex() - start), 0, in.writerIndex() - start);
        if (batch.framingProblem() == null) {
            batch.updateCrc();
        }
    }

    private static Produce.BatchRequest decode(ByteBuf body, int maxEventSize) {
        return Produce.BatchRequest.decode(body, new RecordBatchChecker(), maxEventSize);
    }

    @Test
    void theRequestCarriesAcksTopicPartitionAndTheCheckedBatch() {
        ByteBuf body = Unpooled.buffer();
        request(body, records(0, 3));
        Produce.BatchRequest r = decode(body, MAX_EVENT_SIZE);
        assertThat(r.acks()).isEqualTo(Acks.JOURNAL);
        assertThat(r.topic()).isEqualTo("topic");
        assertThat(r.partition()).isEqualTo(1);
        assertThat(r.batch().recordCount()).isEqualTo(3);
        byte[] stored = new byte[r.batch().length()];
        r.batch().copyTo(stored, 0);
        assertThat(stored).isEqualTo(batch(0, records(0, 3)));

        ByteBuf response = Unpooled.buffer();
        new Produce.BatchResponse(42).encode(response);
        assertThat(Produce.BatchResponse.decode(response).baseOffset()).isEqualTo(42);
    }

    @Test
    void aBatchTheBrokerMustNotStoreIsAProtocolErrorSayingWhy() {
        ByteBuf body = Unpooled.buffer();
        request(body, records(0, 2));
        int batchStart = 1 + 2 + "topic".length() + 4 + 4;
        body.setShort(batchStart + RecordBatch.ATTRIBUTES_OFFSET, 1); // gzip
        recrc(body, batchStart);
        assertThatThrownBy(() -> decode(body, MAX_EVENT_SIZE)).isInstanceOf(ProtocolException.class)
                .hasMessageStartingWith("record batch: ").hasMessageContaining("uncompressed");

        ByteBuf flipped = Unpooled.buffer();
        request(flipped, records(0, 2));
        flipped.setByte(flipped.writerIndex() - 1, flipped.getByte(flipped.writerIndex() - 1) ^ 1);
        assertThatThrownBy(() -> decode(flipped, MAX_EVENT_SIZE)).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("CRC32C mismatch");

        ByteBuf tooLarge = Unpooled.buffer();
        request(tooLarge, records(0, 2));
        assertThatThrownBy(() -> decode(tooLarge, 30)).isInstanceOf(SluiceException.RecordTooLargeException.class)
                .hasMessageContaining("exceeds maxEventSize=30");
    }

    @Test
    void aFetchResponseDecodesItsBatchesFromTheOffsetAsked() {
        TopicPartition tp = new TopicPartition("t", 2);
        byte[] first = batch(100, records(100, 4));
        byte[] second = batch(104, records(104, 3));
        ByteBuf body = Unpooled.directBuffer();
        body.writeInt(2);
        int size = Fetch.Response.writePartitionHeader(body, tp, SluiceException.Code.NONE, null, 0, 107);
        body.writeBytes(first).writeBytes(second);
        Fetch.Response.patchCount(body, size, first.length + second.length);
        Fetch.Response.writePartitionHeader(body, new TopicPartition("t", 3), SluiceException.Code.OFFSET_OUT_OF_RANGE,
                "too far", 0, 3);
        Fetch.Request request = new Fetch.Request(0, 1 << 20, List.of(new Fetch.PartitionRequest(tp, 102, 1 << 20),
                new Fetch.PartitionRequest(new TopicPartition("t", 3), 9, 1 << 20)));
        Fetch.Response decoded = Fetch.Response.decodeBatches(body, request);
        assertThat(decoded.partitions()).hasSize(2);
        Fetch.PartitionData p = decoded.partitions().get(0);
        assertThat(p.error()).isEqualTo(SluiceException.Code.NONE);
        assertThat(p.endOffset()).isEqualTo(107);
        assertThat(p.records()).extracting(ConsumerRecord::offset).containsExactly(102L, 103L, 104L, 105L, 106L);
        List<ProducerRecord> sent = records(102, 5);
        for (int i = 0; i < sent.size(); i++) {
            assertThat(p.records().get(i).key()).isEqualTo(sent.get(i).key());
            assertThat(p.records().get(i).value()).isEqualTo(sent.get(i).value());
            assertThat(p.records().get(i).headers()).isEqualTo(sent.get(i).headers());
            assertThat(p.records().get(i).timestamp()).isEqualTo(sent.get(i).timestamp());
        }
        Fetch.PartitionData out = decoded.partitions().get(1);
        assertThat(out.error()).isEqualTo(SluiceException.Code.OFFSET_OUT_OF_RANGE);
        assertThat(out.errorMessage()).isEqualTo("too far");
        assertThat(out.records()).isEmpty();
    }

    @Test
    void aFetchResponseWithADamagedFirstBatchCarriesCorruptRecordNamingTheOffsets() {
        TopicPartition tp = new TopicPartition("t", 2);
        byte[] damaged = batch(100, records(100, 4));
        damaged[damaged.length - 1] ^= 0x10;
        Fetch.Request request = new Fetch.Request(0, 1 << 20, List.of(new Fetch.PartitionRequest(tp, 102, 1 << 20)));
        ByteBuf body = Unpooled.buffer();
        body.writeInt(1);
        int size = Fetch.Response.writePartitionHeader(body, tp, SluiceException.Code.NONE, null, 0, 104);
        body.writeBytes(damaged);
        Fetch.Response.patchCount(body, size, damaged.length);
        Fetch.PartitionData p = Fetch.Response.decodeBatches(body, request).partitions().get(0);
        assertThat(p.error()).isEqualTo(SluiceException.Code.CORRUPT_RECORD);
        assertThat(p.errorMessage()).contains("offset 102", "base offset 100", "CRC32C");
        assertThat(p.records()).isEmpty();
    }
}
