package io.sluice.net.client.internal;

/** Kafka's murmur2 key hash, so keyed records land on the same partitions as with Kafka's default partitioner. */
public final class Murmur2 {
    private Murmur2() {
    }

    public static int partition(byte[] key, int partitions) {
        return (hash(key) & 0x7fffffff) % partitions;
    }

    public static int hash(byte[] data) {
        int length = data.length;
        int seed = 0x9747b28c;
        final int m = 0x5bd1e995;
        final int r = 24;
        int h = seed ^ length;
        int length4 = length / 4;
        for (int i = 0; i < length4; i++) {
            final int i4 = i * 4;
            int k = (data[i4] & 0xff) + ((data[i4 + 1] & 0xff) << 8) + ((data[i4 + 2] & 0xff) << 16) + ((data[i4 + 3] & 0xff) << 24);
            k *= m;
            k ^= k >>> r;
            k *= m;
            h *= m;
            h ^= k;
        }
        int tail = length % 4;
        int base = length & ~3;
        if (tail == 3) {
            h ^= (data[base + 2] & 0xff) << 16;
        }
        if (tail >= 2) {
            h ^= (data[base + 1] & 0xff) << 8;
        }
        if (tail >= 1) {
            h ^= data[base] & 0xff;
            h *= m;
        }
        h ^= h >>> 13;
        h *= m;
        h ^= h >>> 15;
        return h;
    }
}
