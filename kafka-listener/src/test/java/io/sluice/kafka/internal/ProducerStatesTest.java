package io.sluice.kafka.internal;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import org.apache.kafka.common.errors.DuplicateSequenceException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;

import java.nio.ByteBuffer;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Kafka's sequence rules, checked on the state alone (the batches' bytes play no part in the check). */
class ProducerStatesTest {
    @TempDir
    Path dir;

    private static ProducedBatch batch(long producerId, int epoch, int baseSequence, int count) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1024), Compression.NONE, 0L, producerId,
                (short) epoch, baseSequence, false);
        for (int i = 0; i < count; i++) {
            builder.append(1L, null, new byte[] {(byte) i});
        }
        return ProducedBatch.check(builder.build(), 1 << 20).get(0);
    }

    @Test
    void aRetriedBatchGetsItsOriginalOffsetAndAGapOrAStaleEpochIsRefused() {
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            broker.createTopic(TopicConfig.of("t", 1));
            TopicPartition tp = new TopicPartition("t", 0);
            ProducerStates states = new ProducerStates(broker);

            Object first = states.check(tp, batch(7, 0, 0, 10));
            states.appended(first, 100);
            Object second = states.check(tp, batch(7, 0, 10, 5));
            states.appended(second, 110);

            Object retry = states.check(tp, batch(7, 0, 0, 10));
            assertThat(retry).isInstanceOf(ProducerStates.Duplicate.class);
            assertThat(((ProducerStates.Duplicate) retry).baseOffset().join()).isEqualTo(100);

            assertThatThrownBy(() -> states.check(tp, batch(7, 0, 20, 1))).isInstanceOf(OutOfOrderSequenceException.class);
            assertThatThrownBy(() -> states.check(tp, batch(8, 0, 3, 1))).isInstanceOf(OutOfOrderSequenceException.class);

            for (int i = 0; i < ProducerStates.CACHED_BATCHES; i++) {
                states.appended(states.check(tp, batch(7, 0, 15 + i, 1)), 115 + i);
            }
            assertThatThrownBy(() -> states.check(tp, batch(7, 0, 0, 10))).isInstanceOf(DuplicateSequenceException.class);

            states.appended(states.check(tp, batch(7, 1, 0, 1)), 200); // a new epoch starts again at 0
            assertThatThrownBy(() -> states.check(tp, batch(7, 0, 20, 1))).isInstanceOf(InvalidProducerEpochException.class);
        }
    }

    @Test
    void aFailedAppendIsForgottenSoItsRetryIsAppended() {
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            broker.createTopic(TopicConfig.of("t", 1));
            TopicPartition tp = new TopicPartition("t", 0);
            ProducerStates states = new ProducerStates(broker);
            states.appended(states.check(tp, batch(1, 0, 0, 3)), 0);
            Object failing = states.check(tp, batch(1, 0, 3, 3));
            states.failed(tp, 1, failing, new IllegalStateException("journal full"));
            assertThat(states.check(tp, batch(1, 0, 3, 3))).isNotInstanceOf(ProducerStates.Duplicate.class);
        }
    }
}
