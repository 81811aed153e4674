package io.sluice.kafka.internal;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;

import java.nio.ByteBuffer;
import java.util.Random;

/**
 * How much the produce-side check costs per record, by codec: {@link ProducedBatch#check} on batches as the Java
 * producer sends them (64 KiB of 100-byte values, idempotent producer fields), uncompressed (checked and stored as
 * is) and compressed (decompressed, checked and rebuilt uncompressed). A measurement to quote, not a test:
 * {@code java -cp <test class path> io.sluice.kafka.internal.DecompressionCost}.
 */
public final class DecompressionCost {
    private DecompressionCost() {
    }

    public static void main(String[] args) {
        Random random = new Random(42);
        byte[][] values = new byte[600][];
        for (int i = 0; i < values.length; i++) {
            values[i] = new byte[100];
            for (int j = 0; j < 100; j++) {
                values[i][j] = (byte) ('a' + random.nextInt(8)); // compressible, like text or JSON payloads
            }
        }
        System.out.println("codec   records/batch  batch bytes  ns/record (check + rebuild)  MB/s of uncompressed values");
        for (CompressionType type : new CompressionType[]{CompressionType.NONE, CompressionType.GZIP,
                CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD}) {
            MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1 << 17), RecordBatch.MAGIC_VALUE_V2,
                    Compression.of(type).build(), TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, 7L, (short) 0, 0,
                    false, false, RecordBatch.NO_PARTITION_LEADER_EPOCH);
            int count = 0;
            while (count < values.length && count * 110 < 64 << 10) {
                builder.appendWithOffset(count, 1_700_000_000_000L + count, ("key-" + count).getBytes(), values[count]);
                count++;
            }
            MemoryRecords records = builder.build();
            long sink = 0;
            for (int i = 0; i < 2_000; i++) { // warm-up
                sink += ProducedBatch.check(records, 1 << 20).get(0).bytes().remaining();
            }
            int rounds = 5_000;
            long start = System.nanoTime();
            for (int i = 0; i < rounds; i++) {
                sink += ProducedBatch.check(records, 1 << 20).get(0).bytes().remaining();
            }
            long elapsed = System.nanoTime() - start;
            double nsPerRecord = (double) elapsed / rounds / count;
            double mbps = (double) rounds * count * 100 / (elapsed / 1e9) / 1e6;
            System.out.printf("%-7s %13d  %11d  %27.1f  %27.0f%n", type.name, count, records.sizeInBytes(), nsPerRecord, mbps);
            if (sink == 42) {
                System.out.println();
            }
        }
    }
}
