package io.sluice.net.client.internal;

import io.sluice.core.SluiceException;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BufferMemoryTest {

    @Test
    void aFullBufferRefusesTryAcquireAndFailsAcquireAfterTheMaxBlockTime() {
        BufferMemory memory = new BufferMemory(100);
        assertThat(memory.tryAcquire(60)).isTrue();
        assertThat(memory.tryAcquire(60)).isFalse();
        assertThatThrownBy(() -> memory.acquire(60, 20))
                .isInstanceOf(SluiceException.BackPressureException.class)
                .hasMessageContaining("maxBlockMillis=20");
        assertThat(memory.used()).isEqualTo(60);
    }

    @Test
    void aReleaseWakesABlockedSender() throws Exception {
        BufferMemory memory = new BufferMemory(100);
        memory.acquire(100, 0);
        CompletableFuture<Void> blocked = CompletableFuture.runAsync(() -> memory.acquire(50, 60_000));
        memory.release(100);
        blocked.get(30, TimeUnit.SECONDS); // whether it was already waiting or not, it gets the room
        assertThat(memory.used()).isEqualTo(50);
    }

    @Test
    void keyedPartitionsMatchKafkasMurmur2() {
        // reference values from Kafka's Utils.murmur2 (org.apache.kafka.common.utils.UtilsTest)
        assertThat(Murmur2.hash("21".getBytes())).isEqualTo(-973932308);
        assertThat(Murmur2.hash("foobar".getBytes())).isEqualTo(-790332482);
        assertThat(Murmur2.hash("a-little-bit-long-string".getBytes())).isEqualTo(-985981536);
        assertThat(Murmur2.hash("a-little-bit-longer-string".getBytes())).isEqualTo(-1486304829);
        assertThat(Murmur2.hash("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8".getBytes())).isEqualTo(-58897971);
        assertThat(Murmur2.hash(new byte[] {'a', 'b', 'c'})).isEqualTo(479470107);
    }
}
