package io.sluice.net.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.Header;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * The client's reader of fetched record batches (Kafka RecordBatch v2): records come back from any starting offset,
 * and every damage a CRC32C or the framing can see — any flipped byte the CRC covers, any truncation — is a
 * {@link RecordBatchReader.DamagedBatchException} naming the batch's base offset, never another exception. The
 * batches here are written independently of the broker's codec, from the layout in docs/journal-format.md; the
 * broker's own bytes are read by this reader in broker-net's {@code BatchFetchTest}.
 */
class RecordBatchReaderTest {
    private static final String TOPIC = "t";

    private static byte[] value(long n) {
        return ("value-" + n + "-" + "y".repeat((int) (n % 7))).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] key(long n) {
        return n % 2 == 0 ? null : ("k" + n).getBytes(StandardCharsets.UTF_8);
    }

    private static List<Header> headers(long n) {
        return n % 3 == 0 ? List.of(Header.of("é" + n, "h" + n)) : List.of();
    }

    /** One batch of {@code count} records from {@code base}, laid out as the journal stores it. */
    static byte[] batch(long base, int count) {
        ByteBuf records = Unpooled.buffer();
        long baseTimestamp = 5_000 + base;
        for (int i = 0; i < count; i++) {
            long n = base + i;
            ByteBuf r = Unpooled.buffer();
            r.writeByte(0);
            varlong(r, 5_000 + n - baseTimestamp);
            varint(r, i);
            byte[] k = key(n);
            varint(r, k == null ? -1 : k.length);
            if (k != null) {
                r.writeBytes(k);
            }
            varint(r, value(n).length);
            r.writeBytes(value(n));
            varint(r, headers(n).size());
            for (Header h : headers(n)) {
                byte[] hk = h.key().getBytes(StandardCharsets.UTF_8);
                varint(r, hk.length);
                r.writeBytes(hk);
                varint(r, h.value().length);
                r.writeBytes(h.value());
            }
            varint(records, r.readableBytes());
            records.writeBytes(r);
        }
        ByteBuf b = Unpooled.buffer();
        b.writeLong(base);
        b.writeInt(RecordBatchReader.HEADER_SIZE - RecordBatchReader.LOG_OVERHEAD + records.readableBytes());
        b.writeInt(-1); // partition leader epoch
        b.writeByte(RecordBatchReader.MAGIC);
        b.writeInt(0); // crc, below
        b.writeShort(0); // attributes
        b.writeInt(count - 1);
        b.writeLong(baseTimestamp);
        b.writeLong(baseTimestamp + count - 1);
        b.writeLong(-1);
        b.writeShort(-1);
        b.writeInt(-1);
        b.writeInt(count);
        b.writeBytes(records);
        byte[] bytes = new byte[b.readableBytes()];
        b.readBytes(bytes);
        CRC32C crc = new CRC32C();
        crc.update(bytes, RecordBatchReader.ATTRIBUTES_OFFSET, bytes.length - RecordBatchReader.ATTRIBUTES_OFFSET);
        Unpooled.wrappedBuffer(bytes).setInt(RecordBatchReader.CRC_OFFSET, (int) crc.getValue());
        return bytes;
    }

    private static void varint(ByteBuf out, int value) {
        varlong(out, value);
    }

    private static void varlong(ByteBuf out, long value) {
        long v = (value << 1) ^ (value >> 63);
        while ((v & ~0x7FL) != 0) {
            out.writeByte((int) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        out.writeByte((int) v);
    }

    private static byte[] concat(byte[]... parts) {
        ByteBuf b = Unpooled.buffer();
        for (byte[] p : parts) {
            b.writeBytes(p);
        }
        return Arrays.copyOf(b.array(), b.writerIndex());
    }

    @Test
    void readsTheRecordsFromEveryOffsetInsideAndAcrossBatches() {
        byte[] bytes = concat(batch(10, 4), batch(14, 1), batch(15, 6));
        for (long from = 0; from <= 21; from++) {
            List<ConsumerRecord> out = new ArrayList<>();
            int added = new RecordBatchReader().readAll(Unpooled.wrappedBuffer(bytes), TOPIC, 3, from, out);
            long first = Math.max(from, 10);
            assertThat(added).isEqualTo(out.size()).isEqualTo((int) (21 - first));
            for (int i = 0; i < out.size(); i++) {
                ConsumerRecord r = out.get(i);
                long n = first + i;
                assertThat(r.topicPartition()).isEqualTo(new TopicPartition(TOPIC, 3));
                assertThat(r.offset()).isEqualTo(n);
                assertThat(r.timestamp()).isEqualTo(5_000 + n);
                assertThat(r.key()).isEqualTo(key(n));
                assertThat(r.value()).isEqualTo(value(n));
                assertThat(r.headers()).isEqualTo(headers(n));
            }
        }
    }

    @Test
    void everyFlippedByteTheCrcCoversAndEveryDamagedLengthIsADamagedBatch() {
        byte[] good = batch(40, 5);
        for (int at = RecordBatchReader.BATCH_LENGTH_OFFSET; at < good.length; at++) {
            if (at >= 12 && at < RecordBatchReader.MAGIC_OFFSET) {
                continue; // the partition leader epoch is outside the CRC, as in Kafka, and unused
            }
            for (int bit = 0; bit < 8; bit++) {
                byte[] bad = good.clone();
                bad[at] ^= (byte) (1 << bit);
                List<ConsumerRecord> out = new ArrayList<>();
                try {
                    new RecordBatchReader().readAll(Unpooled.wrappedBuffer(bad), TOPIC, 0, 0, out);
                    fail("a flip of bit " + bit + " at byte " + at + " went unnoticed");
                } catch (RecordBatchReader.DamagedBatchException e) {
                    assertThat(e.baseOffset()).isEqualTo(40);
                    assertThat(e.getMessage()).isNotBlank();
                }
                assertThat(out).isEmpty();
            }
        }
    }

    @Test
    void everyTruncationIsADamagedBatchAfterTheSoundBatchesBeforeIt() {
        byte[] full = concat(batch(0, 3), batch(3, 3));
        int first = batch(0, 3).length;
        for (int cut = first + 1; cut < full.length; cut++) {
            List<ConsumerRecord> out = new ArrayList<>();
            byte[] prefix = Arrays.copyOf(full, cut);
            assertThatThrownBy(() -> new RecordBatchReader().readAll(Unpooled.wrappedBuffer(prefix), TOPIC, 0, 0, out))
                    .isInstanceOf(RecordBatchReader.DamagedBatchException.class);
            assertThat(out).extracting(ConsumerRecord::offset).containsExactly(0L, 1L, 2L);
        }
    }

    @Test
    void aFetchResponseWithADamagedFirstBatchCarriesCorruptRecordNamingTheOffsets() {
        TopicPartition tp = new TopicPartition(TOPIC, 2);
        byte[] damaged = batch(100, 4);
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
