package io.sluice.bench.scenario;

import io.sluice.core.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What "every run delivered exactly what it sent" means in the scenarios. */
class DeliveryLedgerTest {

    @Test
    void aDuplicateStandingInForALostRecordFailsTheRun() {
        DeliveryLedger ledger = new DeliveryLedger(3);
        ledger.record(0, 10);
        ledger.record(1, 10);
        ledger.record(0, 10);
        assertThatThrownBy(() -> ledger.verify("acks", 3)).hasMessageContaining("partition 0 offset 10 recorded twice");
    }

    @Test
    void oneRecordTooManyOrTooFewFailsTheRun() {
        DeliveryLedger ledger = new DeliveryLedger(2);
        ledger.record(0, 1);
        ledger.record(0, 2);
        ledger.record(0, 3);
        assertThatThrownBy(() -> ledger.verify("acks", 2)).hasMessageContaining("3 recorded, 2 expected");
        assertThatThrownBy(() -> ledger.verify("acks", 4)).hasMessageContaining("3 recorded, 4 expected");
    }

    @Test
    void exactlyTheSentRecordsEachOncePass() {
        DeliveryLedger ledger = new DeliveryLedger(4);
        ledger.record(1, 7);
        ledger.record(0, 7);
        ledger.record(1, 8);
        ledger.record(0, 8);
        ledger.verify("acks", 4);
        assertThat(ledger.size()).isEqualTo(4);
    }

    @Test
    void aGroupRedeliveryIsCountedApartAndARecordNeverSentIsRefused() {
        DistinctOffsets seen = new DistinctOffsets(Map.of(new TopicPartition("t", 0), new long[]{100, 200},
                new TopicPartition("t", 1), new long[]{0, 65}));
        seen.add(0, 100);
        seen.add(0, 199);
        seen.add(1, 64);
        seen.add(0, 100);
        assertThat(seen.distinct()).isEqualTo(3);
        assertThat(seen.redelivered()).isEqualTo(1);
        assertThatThrownBy(() -> seen.add(0, 200)).hasMessageContaining("was not sent");
        assertThatThrownBy(() -> seen.add(2, 0)).hasMessageContaining("was not sent");
    }
}
