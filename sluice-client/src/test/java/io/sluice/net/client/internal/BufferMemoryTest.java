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
}
