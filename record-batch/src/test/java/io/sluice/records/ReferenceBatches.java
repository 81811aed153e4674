package io.sluice.records;

import io.sluice.core.Header;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Batches written independently of the codec, straight from the layout in docs/journal-format.md, with records that
 * vary by offset {@code n}: a key on odd offsets, a header on multiples of 3, values of varying length.
 */
final class ReferenceBatches {
    private ReferenceBatches() {
    }

    static byte[] value(long n) {
        return ("value-" + n + "-" + "y".repeat((int) (n % 7))).getBytes(StandardCharsets.UTF_8);
    }

    static byte[] key(long n) {
        return n % 2 == 0 ? null : ("k" + n).getBytes(StandardCharsets.UTF_8);
    }

    static List<Header> headers(long n) {
        return n % 3 == 0 ? List.of(Header.of("é" + n, "h" + n)) : List.of();
    }

    static long timestamp(long n) {
        return 5_000 + n;
    }

    /** One batch of {@code count} records from {@code base}, laid out as the journal stores it. */
    static byte[] batch(long base, int count) {
        try {
            ByteArrayOutputStream records = new ByteArrayOutputStream();
            long baseTimestamp = timestamp(base);
            for (int i = 0; i < count; i++) {
                long n = base + i;
                ByteArrayOutputStream r = new ByteArrayOutputStream();
                r.write(0);
                varlong(r, timestamp(n) - baseTimestamp);
                varlong(r, i);
                byte[] k = key(n);
                varlong(r, k == null ? -1 : k.length);
                if (k != null) {
                    r.write(k);
                }
                varlong(r, value(n).length);
                r.write(value(n));
                varlong(r, headers(n).size());
                for (Header h : headers(n)) {
                    byte[] hk = h.key().getBytes(StandardCharsets.UTF_8);
                    varlong(r, hk.length);
                    r.write(hk);
                    varlong(r, h.value().length);
                    r.write(h.value());
                }
                varlong(records, r.size());
                r.writeTo(records);
            }
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream b = new DataOutputStream(bytes);
            b.writeLong(base);
            b.writeInt(RecordBatch.HEADER_SIZE - RecordBatch.LOG_OVERHEAD + records.size());
            b.writeInt(-1); // partition leader epoch
            b.writeByte(RecordBatch.MAGIC);
            b.writeInt(0); // crc, below
            b.writeShort(0); // attributes
            b.writeInt(count - 1);
            b.writeLong(baseTimestamp);
            b.writeLong(baseTimestamp + count - 1);
            b.writeLong(-1);
            b.writeShort(-1);
            b.writeInt(-1);
            b.writeInt(count);
            records.writeTo(b);
            return recrc(bytes.toByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Recomputes the CRC32C of a batch whose length field is sound. */
    static byte[] recrc(byte[] batch) {
        ByteBuffer b = ByteBuffer.wrap(batch);
        int end = RecordBatch.LOG_OVERHEAD + b.getInt(RecordBatch.BATCH_LENGTH_OFFSET);
        CRC32C crc = new CRC32C();
        crc.update(batch, RecordBatch.ATTRIBUTES_OFFSET, end - RecordBatch.ATTRIBUTES_OFFSET);
        b.putInt(RecordBatch.CRC_OFFSET, (int) crc.getValue());
        return batch;
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    private static void varlong(ByteArrayOutputStream out, long value) {
        long v = (value << 1) ^ (value >> 63);
        while ((v & ~0x7FL) != 0) {
            out.write((int) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }
}
