package io.sluice.redis;

import io.sluice.core.Producer;
import io.sluice.core.ProducerRecord;
import io.sluice.core.RecordMetadata;
import io.sluice.core.SluiceException;
import io.sluice.testkit.RedisServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Redis stops answering ({@code CLIENT PAUSE}): the producer's in-flight bound fills, further sends are refused as
 * back-pressure (a value from {@code trySend}, a failed future from {@code send}) instead of queueing without bound,
 * and every accepted send is acknowledged and stored once Redis answers again.
 */
@ExtendWith(ServicesExtension.class)
class RedisPausedTest {

    @Test
    void aPausedRedisBackPressuresTheProducerAndLosesNothingAccepted(RedisServer redis) throws Exception {
        RedisStreamsConfig cfg = RedisStreamsRoundTripTest.config(redis).maxInFlight(16).maxBlockMillis(50).commandTimeoutMillis(20_000).build();
        try (RedisStreamsProducer producer = new RedisStreamsProducer(cfg)) {
            producer.send(ProducerRecord.of("audit", null, "warm-up")).join();
            assertThat(redis.command("CLIENT", "PAUSE", "2000", "ALL")).isEqualTo("+OK");
            List<CompletableFuture<RecordMetadata>> accepted = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                CompletableFuture<RecordMetadata> f = new CompletableFuture<>();
                long r = producer.trySend(ProducerRecord.of("audit", null, "e" + i), (p, offset, error) -> {
                    if (error == null) {
                        f.complete(new RecordMetadata("audit", p, offset, 0));
                    } else {
                        f.completeExceptionally(error);
                    }
                });
                assertThat(r).isEqualTo(Producer.ACCEPTED);
                accepted.add(f);
            }
            assertThat(producer.trySend(ProducerRecord.of("audit", null, "refused"), (p, o, e) -> { })).isEqualTo(Producer.BACK_PRESSURED);
            CompletableFuture<RecordMetadata> blocked = producer.send(ProducerRecord.of("audit", null, "refused-too"));
            assertThatThrownBy(blocked::get).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(SluiceException.BackPressureException.class);

            producer.flush(); // returns once Redis answers again
            for (CompletableFuture<RecordMetadata> f : accepted) {
                assertThat(f).isCompleted();
                assertThat(f.get().offset()).isPositive();
            }
        }
        long stored = redis.commandLong("XLEN", cfg.streamKey("audit", 0));
        System.out.printf("[reliability] paused Redis: accepted 17, refused 2 (back-pressure), stored %d, lost %d%n", stored, 17 - stored);
        assertThat(stored).isEqualTo(17);
    }
}
