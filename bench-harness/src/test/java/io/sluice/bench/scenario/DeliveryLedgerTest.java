package io.sluice.bench.scenario;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
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
        DeliveredRanges seen = new DeliveredRanges(Map.of(new TopicPartition("t", 0), new long[]{100, 200},
                new TopicPartition("t", 1), new long[]{0, 65}));
        DeliveredRanges.Member a = seen.member();
        DeliveredRanges.Member b = seen.member();
        assertThat(a.polled(records(0, 100, 150))).isFalse();
        assertThat(b.polled(records(1, 0, 65))).isFalse();
        assertThat(seen.reachedTheEnd()).isFalse();
        assertThat(b.polled(records(0, 140, 200))).isTrue(); // after a rebalance: 140..149 again
        assertThat(seen.reachedTheEnd()).isTrue();
        seen.verify();
        assertThat(seen.redelivered()).isEqualTo(10);
        assertThatThrownBy(() -> a.polled(records(0, 200, 201))).hasMessageContaining("were not sent");
        assertThatThrownBy(() -> a.polled(records(2, 0, 1))).hasMessageContaining("were not sent");
    }

    @Test
    void anOffsetNoMemberDeliveredFailsTheRunThoughTheEndWasReached() {
        DeliveredRanges seen = new DeliveredRanges(Map.of(new TopicPartition("t", 0), new long[]{0, 100}));
        DeliveredRanges.Member a = seen.member();
        a.polled(records(0, 0, 40));
        a.polled(records(0, 41, 100));
        assertThat(seen.reachedTheEnd()).isTrue();
        assertThatThrownBy(seen::verify).hasMessageContaining("partition 0 offsets 40..40 were never delivered");
    }

    /** Records of partition {@code p}, offsets [from, to). */
    private static List<ConsumerRecord> records(int p, long from, long to) {
        List<ConsumerRecord> out = new ArrayList<>();
        for (long o = from; o < to; o++) {
            out.add(new ConsumerRecord("t", p, o, 0L, null, new byte[0], List.of()));
        }
        return out;
    }
}
