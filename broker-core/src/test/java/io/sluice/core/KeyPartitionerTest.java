package io.sluice.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class KeyPartitionerTest {
    @Test
    void hashesKeysExactlyAsKafkasMurmur2() {
        // reference values from Kafka's Utils.murmur2 (org.apache.kafka.common.utils.UtilsTest)
        assertThat(KeyPartitioner.murmur2("21".getBytes())).isEqualTo(-973932308);
        assertThat(KeyPartitioner.murmur2("foobar".getBytes())).isEqualTo(-790332482);
        assertThat(KeyPartitioner.murmur2("a-little-bit-long-string".getBytes())).isEqualTo(-985981536);
        assertThat(KeyPartitioner.murmur2("a-little-bit-longer-string".getBytes())).isEqualTo(-1486304829);
        assertThat(KeyPartitioner.murmur2("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8".getBytes())).isEqualTo(-58897971);
        assertThat(KeyPartitioner.murmur2(new byte[] {'a', 'b', 'c'})).isEqualTo(479470107);
    }

    @Test
    void partitionsAreNonNegativeAndBelowTheCount() {
        for (int i = 0; i < 1000; i++) {
            assertThat(KeyPartitioner.partition(("k" + i).getBytes(), 7)).isBetween(0, 6);
        }
    }
}
